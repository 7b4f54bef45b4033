//! The product rule for shapes: every shape staticfx shows equals PyTorch's, or is unknown.
//! An invented shape is worse than none. The fidelity suites align staticfx's nodes with
//! PyTorch's recording (each suite its own way: torch.fx node names, or eager op sequences)
//! and feed every aligned pair here; this counts them as equal, unknown (staticfx shows no
//! shape, or a symbolic one that agrees wherever it is a number) or wrong (both known and
//! different), prints the table, and holds the wrong ones to an exact list.

use serde_json::Value;
use std::collections::BTreeSet;

/// How one aligned pair of shapes compares.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Equal,
    Unknown,
    Wrong,
}

/// Compares PyTorch's `want` shape (a list of ints, or null where no tensor was recorded) with
/// staticfx's `got` (a list of ints; where a dim is symbolic or unknown, a list of strings:
/// `["2", "s0", "?"]`; null where unknown), and
/// the dtypes where both sides give one. `None` when neither side shows a shape.
pub fn classify(
    want: &Value,
    want_dtype: &Value,
    got: &Value,
    got_dtype: &Value,
) -> Option<Verdict> {
    let dtype_differs = want_dtype.is_string() && got_dtype.is_string() && want_dtype != got_dtype;
    match (want.as_array(), got.as_array()) {
        (None, None) => None,
        // PyTorch recorded no tensor here; staticfx claims one.
        (None, Some(_)) => Some(Verdict::Wrong),
        (Some(_), None) => Some(if dtype_differs {
            Verdict::Wrong
        } else {
            Verdict::Unknown
        }),
        (Some(w), Some(g)) => {
            if w.len() != g.len() || dtype_differs {
                return Some(Verdict::Wrong);
            }
            let mut symbolic = false;
            for (w, g) in w.iter().zip(g) {
                // A shape with a symbolic or unknown dim is rendered all as strings
                // (`["2", "s0", "?"]`): its known dims are numbers in strings.
                let known = g
                    .as_i64()
                    .or_else(|| g.as_str().and_then(|d| d.parse().ok()));
                match known {
                    Some(d) if w.as_i64() != Some(d) => return Some(Verdict::Wrong),
                    Some(_) => {}
                    None => symbolic = true,
                }
            }
            Some(if symbolic {
                Verdict::Unknown
            } else {
                Verdict::Equal
            })
        }
    }
}

/// A wrong shape: where, and the two sides.
pub struct Wrong {
    pub case: String,
    pub node: String,
    pub want: String,
    pub got: String,
}

#[derive(Default)]
pub struct Tally {
    pub compared: usize,
    pub equal: usize,
    pub unknown: usize,
    pub wrong: Vec<Wrong>,
}

impl Tally {
    /// Counts one aligned pair (nothing when neither side shows a shape).
    pub fn add(
        &mut self,
        case: &str,
        node: &str,
        want: &Value,
        want_dtype: &Value,
        got: &Value,
        got_dtype: &Value,
    ) {
        let Some(v) = classify(want, want_dtype, got, got_dtype) else {
            return;
        };
        self.compared += 1;
        match v {
            Verdict::Equal => self.equal += 1,
            Verdict::Unknown => self.unknown += 1,
            Verdict::Wrong => {
                let side = |s: &Value, d: &Value| {
                    if d.is_string() {
                        format!("{s} {}", d.as_str().unwrap())
                    } else {
                        s.to_string()
                    }
                };
                self.wrong.push(Wrong {
                    case: case.to_string(),
                    node: node.to_string(),
                    want: side(want, want_dtype),
                    got: side(got, got_dtype),
                })
            }
        }
    }

    // Each test crate that includes this module uses its own part of it.
    #[allow(dead_code)]
    pub fn merge(&mut self, other: Tally) {
        self.compared += other.compared;
        self.equal += other.equal;
        self.unknown += other.unknown;
        self.wrong.extend(other.wrong);
    }

    /// Prints the table for `suite` and the wrong shapes, then asserts that the wrong ones are
    /// exactly `known_wrong` (case, node): a new wrong shape fails, and so does an entry that
    /// no longer is wrong (it is fixed: take it out of the list).
    pub fn report_and_check(&self, suite: &str, known_wrong: &[(&str, &str)]) {
        eprintln!(
            "shapes {suite}: {} compared, {} equal, {} unknown, {} wrong",
            self.compared,
            self.equal,
            self.unknown,
            self.wrong.len()
        );
        for w in &self.wrong {
            eprintln!(
                "  WRONG {} {}: expected {}, got {}",
                w.case, w.node, w.want, w.got
            );
        }
        let got: BTreeSet<(String, String)> = self
            .wrong
            .iter()
            .map(|w| (w.case.clone(), w.node.clone()))
            .collect();
        let known: BTreeSet<(String, String)> = known_wrong
            .iter()
            .map(|(c, n)| (c.to_string(), n.to_string()))
            .collect();
        let new: Vec<_> = got.difference(&known).collect();
        let fixed: Vec<_> = known.difference(&got).collect();
        assert!(
            new.is_empty() && fixed.is_empty(),
            "{suite}: shapes staticfx shows must equal PyTorch's or be unknown.\n\
             wrong and not known: {new:?}\nknown wrong but no longer wrong (remove them): {fixed:?}"
        );
    }
}

#[test]
fn shapes_are_equal_unknown_or_wrong() {
    use serde_json::json;
    let f32 = json!("float32");
    let c = |w: Value, g: Value| classify(&w, &f32, &g, &f32);
    assert_eq!(c(json!([2, 3]), json!([2, 3])), Some(Verdict::Equal));
    assert_eq!(c(json!([2, 3]), Value::Null), Some(Verdict::Unknown));
    assert_eq!(c(json!([2, 3]), json!(["s0", 3])), Some(Verdict::Unknown));
    assert_eq!(c(json!([2, 3]), json!(["s0", 4])), Some(Verdict::Wrong));
    // Known dims of a partly known shape are rendered as strings.
    assert_eq!(c(json!([2, 3]), json!(["2", "?"])), Some(Verdict::Unknown));
    assert_eq!(c(json!([2, 3]), json!(["4", "?"])), Some(Verdict::Wrong));
    assert_eq!(c(json!([2, 3]), json!(["s0", "3"])), Some(Verdict::Unknown));
    assert_eq!(c(json!([2, 3]), json!([2, 3, 1])), Some(Verdict::Wrong));
    assert_eq!(c(Value::Null, json!([2])), Some(Verdict::Wrong));
    assert_eq!(c(Value::Null, Value::Null), None);
    assert_eq!(
        classify(&json!([2]), &f32, &json!([2]), &json!("int64")),
        Some(Verdict::Wrong)
    );
    // No dtype on one side (eager recordings give none): shapes alone.
    assert_eq!(
        classify(&json!([2]), &Value::Null, &json!([2]), &json!("int64")),
        Some(Verdict::Equal)
    );
}
