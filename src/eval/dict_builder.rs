//! Building a fresh dict entry by entry (a literal, a comprehension, `dict(pairs)`, `d | e`)
//! without a scan per entry.
//!
//! A dict is a `Vec` of entries compared with `py_eq`, which is right for the small dicts most
//! code makes, but a comprehension over a model's parameters or a config's attributes inserts
//! hundreds of entries, each compared with every entry before it: that scan was 5–6% of the
//! instructions of a `check` of modeling_llama and modeling_bert. Past a few entries the builder keeps an index by value
//! for keys whose equality is plain (strings, numbers, None, tuples of them), and falls back
//! to the scan for good once a key is anything else (an enum member equals its value, an
//! unknown value equals nothing for sure).

use std::collections::HashMap;
use std::rc::Rc;

use super::value::Value;

/// Entries a dict holds before the builder indexes them: below it the scan is cheaper.
const INDEX_FROM: usize = 16;

/// A key whose `py_eq` is equality of this value: `True == 1 == 1.0` share one.
#[derive(PartialEq, Eq, Hash)]
enum Plain {
    None,
    Int(i64),
    /// A finite float with a fraction, by its bits (no integer equals it).
    Fraction(u64),
    Str(Rc<str>),
    Tuple(Vec<Plain>),
}

/// 2^53: below it an integral float and the int of its value convert to each other exactly.
const EXACT_FLOAT_INTS: f64 = 9_007_199_254_740_992.0;

fn plain(v: &Value) -> Option<Plain> {
    Some(match v {
        Value::None => Plain::None,
        Value::Bool(b) => Plain::Int(i64::from(*b)),
        Value::Int(i) => Plain::Int(*i),
        Value::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < EXACT_FLOAT_INTS => {
            Plain::Int(*f as i64)
        }
        // a value with a fraction has one bit pattern (only zero has two)
        Value::Float(f) if f.is_finite() && f.fract() != 0.0 => Plain::Fraction(f.to_bits()),
        Value::Str(s) => Plain::Str(s.clone()),
        Value::Tuple(items) => Plain::Tuple(items.iter().map(plain).collect::<Option<_>>()?),
        _ => return None,
    })
}

enum Index {
    /// Too few entries to index yet.
    Small,
    Plain(HashMap<Plain, usize, foldhash::fast::RandomState>),
    /// Some key is not plain: every insert scans.
    Scan,
}

pub struct DictBuilder {
    items: Vec<(Value, Value)>,
    index: Index,
}

impl Default for DictBuilder {
    fn default() -> Self {
        DictBuilder {
            items: Vec::new(),
            index: Index::Small,
        }
    }
}

impl DictBuilder {
    /// A builder that starts from a dict's entries (`dict(d, k=v)`, `d | e`): their keys are
    /// already distinct.
    pub fn from_entries(items: Vec<(Value, Value)>) -> Self {
        DictBuilder {
            items,
            index: Index::Small,
        }
    }

    /// `d[key] = val` as a dict display does it: a key equal to an earlier one keeps the
    /// earlier key and its position, with the new value.
    pub fn insert(&mut self, key: Value, val: Value) {
        match &mut self.index {
            Index::Plain(index) => match plain(&key) {
                Some(k) => match index.get(&k) {
                    Some(&i) => self.items[i].1 = val,
                    None => {
                        index.insert(k, self.items.len());
                        self.items.push((key, val));
                    }
                },
                None => {
                    self.index = Index::Scan;
                    super::expr::dict_insert(&mut self.items, key, val);
                }
            },
            Index::Small => {
                super::expr::dict_insert(&mut self.items, key, val);
                if self.items.len() >= INDEX_FROM {
                    self.index = self.index_entries();
                }
            }
            Index::Scan => super::expr::dict_insert(&mut self.items, key, val),
        }
    }

    fn index_entries(&self) -> Index {
        let mut index = HashMap::default();
        for (i, (k, _)) in self.items.iter().enumerate() {
            match plain(k) {
                Some(k) => index.insert(k, i),
                None => return Index::Scan,
            };
        }
        Index::Plain(index)
    }

    pub fn finish(self) -> Vec<(Value, Value)> {
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(entries: Vec<(Value, Value)>) -> Vec<(Value, Value)> {
        let mut b = DictBuilder::default();
        for (k, v) in entries {
            b.insert(k, v);
        }
        b.finish()
    }

    fn scanned(entries: Vec<(Value, Value)>) -> Vec<(Value, Value)> {
        let mut items = Vec::new();
        for (k, v) in entries {
            super::super::expr::dict_insert(&mut items, k, v);
        }
        items
    }

    fn show(items: &[(Value, Value)]) -> Vec<String> {
        items.iter().map(|(k, v)| format!("{k:?}: {v:?}")).collect()
    }

    /// Many keys, repeated under equal values of other types (`1`, `1.0`, `True`), a tuple
    /// key and a fraction: the same entries, in the same order, as the scan gives.
    #[test]
    fn same_entries_as_the_scan_past_the_index_threshold() {
        let mut entries = Vec::new();
        for i in 0..40 {
            entries.push((Value::Int(i), Value::Int(i)));
            entries.push((Value::str(&format!("k{}", i % 25)), Value::Int(i)));
        }
        entries.push((Value::Float(1.0), Value::str("float one")));
        entries.push((Value::Bool(true), Value::str("true")));
        entries.push((Value::Float(0.5), Value::str("half")));
        entries.push((Value::Float(-0.0), Value::str("zero")));
        entries.push((
            Value::tuple(vec![Value::Int(2), Value::str("a")]),
            Value::str("pair"),
        ));
        entries.push((
            Value::tuple(vec![Value::Float(2.0), Value::str("a")]),
            Value::str("pair again"),
        ));
        entries.push((Value::None, Value::Int(1)));
        entries.push((Value::None, Value::Int(2)));
        let built = build(entries.clone());
        assert_eq!(show(&built), show(&scanned(entries)));
        // 40 ints, 25 strings, 0.5, the tuple, None
        assert_eq!(built.len(), 68);
        let one = built
            .iter()
            .find(|(k, _)| matches!(k, Value::Int(1)))
            .unwrap();
        assert!(
            matches!(&one.1, Value::Str(s) if &**s == "true"),
            "{:?}",
            one.1
        );
    }

    /// `dict(d, **kw)` and `d | e` start from a dict's 20 entries: a key equal to one of them
    /// (`1.0` for `1`) replaces its value in place, a new one goes last.
    #[test]
    fn a_builder_from_entries_updates_them_as_the_scan_does() {
        let start: Vec<(Value, Value)> = (0..20).map(|i| (Value::Int(i), Value::Int(i))).collect();
        let more = vec![
            (Value::Float(1.0), Value::str("one")),
            (Value::str("new"), Value::Int(7)),
            (Value::Bool(false), Value::str("zero")),
        ];
        let mut b = DictBuilder::from_entries(start.clone());
        let mut items = start;
        for (k, v) in more {
            b.insert(k.clone(), v.clone());
            super::super::expr::dict_insert(&mut items, k, v);
        }
        let built = b.finish();
        assert_eq!(show(&built), show(&items));
        assert_eq!(built.len(), 21);
        assert!(matches!(&built[1], (Value::Int(1), Value::Str(s)) if &**s == "one"));
    }

    /// A key that is not plain (an unknown value: equal to nothing for sure) stops the index;
    /// later equal plain keys still find their entries.
    #[test]
    fn a_key_that_is_not_plain_turns_the_index_off() {
        let mut entries: Vec<(Value, Value)> =
            (0..20).map(|i| (Value::Int(i), Value::Int(i))).collect();
        entries.push((Value::unknown("a key"), Value::Int(-1)));
        entries.push((Value::unknown("a key"), Value::Int(-2)));
        entries.push((Value::Int(3), Value::Int(33)));
        entries.push((Value::Float(f64::NAN), Value::Int(0)));
        let built = build(entries.clone());
        assert_eq!(show(&built), show(&scanned(entries)));
        assert_eq!(built.len(), 23);
    }
}
