//! How Python binds one parameter of a call, for every stage that reads recorded arguments
//! (shape rules, the executor): the positional argument at the parameter's position if there
//! is one, else the keyword of its name; both at once is Python's "got multiple values".

/// The argument for the parameter at position `pos` named `name`: Ok(None) when absent, Err
/// when given both by position and by keyword.
pub fn bind<'a, T>(
    args: &'a [T],
    kwargs: &'a [(String, T)],
    pos: usize,
    name: &str,
) -> Result<Option<&'a T>, String> {
    let keyword = kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    match (args.get(pos), keyword) {
        (Some(_), Some(_)) => Err(format!("got multiple values for argument `{name}`")),
        (Some(v), None) | (None, Some(v)) => Ok(Some(v)),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::bind;

    #[test]
    fn positionals_then_keywords_and_duplicates_are_errors() {
        let kw = vec![("dim".to_string(), 7)];
        assert_eq!(bind(&[1, 2], &kw, 1, "end_dim"), Ok(Some(&2)));
        assert_eq!(bind(&[1], &kw, 1, "dim"), Ok(Some(&7)));
        assert_eq!(bind(&[1], &kw, 2, "other"), Ok(None));
        assert!(bind(&[1, 2], &kw, 1, "dim")
            .unwrap_err()
            .contains("multiple values"));
    }
}
