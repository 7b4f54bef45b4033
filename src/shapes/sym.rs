//! Symbolic dimension expressions: what a dim is when the input's size is not given, e.g. the
//! batch `s0`, or `(s1 - 1)//2 + 1` after a stride-2 convolution.
//!
//! An expression is kept in one canonical form — a sum of integer multiples of monomials, each
//! monomial a sorted product of atoms (a symbol or an irreducible floor division) — so that two
//! dims that are equal by arithmetic compare equal as values, which broadcasting relies on.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Atom {
    /// `s{n}`.
    Sym(u32),
    /// `expr // k` (k > 1) that did not simplify.
    FloorDiv(Box<Expr>, i64),
}

/// Sum of `coeff * product(atoms)`; terms sorted by monomial, no zero coefficients, the
/// constant term has an empty monomial.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Expr {
    terms: Vec<(Vec<Atom>, i64)>,
}

impl Expr {
    pub fn sym(n: u32) -> Expr {
        Expr {
            terms: vec![(vec![Atom::Sym(n)], 1)],
        }
    }

    pub fn constant(c: i64) -> Expr {
        Expr::normalize(vec![(vec![], c)])
    }

    /// `n` when the expression is the bare symbol `s{n}`.
    pub fn as_sym(&self) -> Option<u32> {
        match self.terms.as_slice() {
            [(m, 1)] => match m.as_slice() {
                [Atom::Sym(n)] => Some(*n),
                _ => None,
            },
            _ => None,
        }
    }

    /// The value when the expression has no symbols.
    pub fn as_const(&self) -> Option<i64> {
        match self.terms.as_slice() {
            [] => Some(0),
            [(m, c)] if m.is_empty() => Some(*c),
            _ => None,
        }
    }

    fn normalize(mut terms: Vec<(Vec<Atom>, i64)>) -> Expr {
        for (m, _) in terms.iter_mut() {
            m.sort();
        }
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Vec<Atom>, i64)> = Vec::with_capacity(terms.len());
        for (m, c) in terms {
            match out.last_mut() {
                Some((lm, lc)) if *lm == m => *lc = lc.saturating_add(c),
                _ => out.push((m, c)),
            }
        }
        out.retain(|(_, c)| *c != 0);
        Expr { terms: out }
    }

    pub fn add(&self, o: &Expr) -> Expr {
        Expr::normalize(self.terms.iter().chain(&o.terms).cloned().collect())
    }

    pub fn add_const(&self, c: i64) -> Expr {
        self.add(&Expr::constant(c))
    }

    pub fn scale(&self, k: i64) -> Expr {
        Expr::normalize(
            self.terms
                .iter()
                .map(|(m, c)| (m.clone(), c.saturating_mul(k)))
                .collect(),
        )
    }

    pub fn mul(&self, o: &Expr) -> Expr {
        let mut terms = Vec::new();
        for (ma, ca) in &self.terms {
            for (mb, cb) in &o.terms {
                let mut m = ma.clone();
                m.extend(mb.iter().cloned());
                terms.push((m, ca.saturating_mul(*cb)));
            }
        }
        Expr::normalize(terms)
    }

    /// `self // k` for k > 0. Terms whose coefficient k divides leave exactly; a constant
    /// remainder floors; anything else stays as an explicit floor division.
    pub fn floordiv(&self, k: i64) -> Option<Expr> {
        if k <= 0 {
            return None;
        }
        if k == 1 {
            return Some(self.clone());
        }
        // (e // a + c) // b == (e + c*a) // (a*b) for positive a, b and integer c: the
        // second pool of a CNN reads `s//4`, not `s//2//2`.
        let constant_of = |terms: &[(Vec<Atom>, i64)]| {
            terms
                .iter()
                .find(|(m, _)| m.is_empty())
                .map(|(_, c)| *c)
                .unwrap_or(0)
        };
        let symbolic: Vec<_> = self.terms.iter().filter(|(m, _)| !m.is_empty()).collect();
        if let [(m, 1)] = symbolic.as_slice() {
            if let [Atom::FloorDiv(inner, a)] = m.as_slice() {
                let c = constant_of(&self.terms);
                return inner
                    .add_const(c.checked_mul(*a)?)
                    .floordiv(a.checked_mul(k)?);
            }
        }
        let mut exact = Vec::new();
        let mut rest = Vec::new();
        for (m, c) in &self.terms {
            if m.is_empty() {
                continue;
            }
            if c % k == 0 {
                exact.push((m.clone(), c / k));
            } else {
                rest.push((m.clone(), *c));
            }
        }
        let constant = self
            .terms
            .iter()
            .find(|(m, _)| m.is_empty())
            .map(|(_, c)| *c)
            .unwrap_or(0);
        if rest.is_empty() {
            exact.push((vec![], constant.div_euclid(k)));
            return Some(Expr::normalize(exact));
        }
        // Pull whole multiples of k out of the constant so the remainder is in [0, k).
        exact.push((vec![], constant.div_euclid(k)));
        rest.push((vec![], constant.rem_euclid(k)));
        exact.push((vec![Atom::FloorDiv(Box::new(Expr::normalize(rest)), k)], 1));
        Some(Expr::normalize(exact))
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atom::Sym(n) => write!(f, "s{n}"),
            Atom::FloorDiv(e, k) if e.terms.len() > 1 => write!(f, "({e})//{k}"),
            Atom::FloorDiv(e, k) => write!(f, "{e}//{k}"),
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terms.is_empty() {
            return f.write_str("0");
        }
        // Symbolic terms first, the constant last: `s0 + 3`, not `3 + s0`.
        let mut terms: Vec<&(Vec<Atom>, i64)> =
            self.terms.iter().filter(|(m, _)| !m.is_empty()).collect();
        terms.extend(self.terms.iter().filter(|(m, _)| m.is_empty()));
        for (i, (m, c)) in terms.iter().enumerate() {
            let (neg, mag) = (*c < 0, c.unsigned_abs());
            match (i, neg) {
                (0, true) => f.write_str("-")?,
                (0, false) => {}
                (_, true) => f.write_str(" - ")?,
                (_, false) => f.write_str(" + ")?,
            }
            if m.is_empty() {
                write!(f, "{mag}")?;
                continue;
            }
            if mag != 1 {
                write!(f, "{mag}*")?;
            }
            // Inside a product a floor division is parenthesised: `32*(s1//4)`, not `32*s1//4`.
            let alone = mag == 1 && m.len() == 1;
            for (j, a) in m.iter().enumerate() {
                if j > 0 {
                    f.write_str("*")?;
                }
                match a {
                    Atom::FloorDiv(..) if !alone => write!(f, "({a})")?,
                    _ => write!(f, "{a}")?,
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_simplifies_to_one_form() {
        let s0 = Expr::sym(0);
        let s1 = Expr::sym(1);
        assert_eq!(s0.add_const(3).add_const(-3), s0);
        assert_eq!(s0.add(&s1), s1.add(&s0));
        assert_eq!(s0.scale(2).to_string(), "2*s0");
        assert_eq!(s0.mul(&s1).scale(4).to_string(), "4*s0*s1");
        assert_eq!(s0.add_const(-1).to_string(), "s0 - 1");
        assert_eq!(
            s0.scale(2).add_const(6).floordiv(2).unwrap().to_string(),
            "s0 + 3"
        );
        assert_eq!(
            s0.scale(2).add_const(5).floordiv(2).unwrap().to_string(),
            "s0 + 2"
        );
        // Conv 7x7 stride 2 pad 3 on s1: (s1 + 6 - 7)//2 + 1.
        let out = s1.add_const(6 - 7).floordiv(2).unwrap().add_const(1);
        assert_eq!(out.to_string(), "(s1 + 1)//2");
        assert_eq!(
            s1.floordiv(2).unwrap().floordiv(2).unwrap().to_string(),
            "s1//4"
        );
        assert_eq!(
            s1.floordiv(4).unwrap().mul(&s0).scale(32).to_string(),
            "32*s0*(s1//4)"
        );
        // Two 2x2 pools: (s1//2 - 2)//2 + 1 == (s1 - 4)//4 + 1 == s1//4.
        let pool = |e: &Expr| e.add_const(-2).floordiv(2).unwrap().add_const(1);
        assert_eq!(pool(&pool(&s1)).to_string(), "s1//4");
        // (s1//2 + 1)//2 == (s1 + 2)//4, which is not s1//4 + something.
        assert_eq!(
            s1.floordiv(2)
                .unwrap()
                .add_const(1)
                .floordiv(2)
                .unwrap()
                .to_string(),
            "(s1 + 2)//4"
        );
        assert_eq!(Expr::constant(7).floordiv(2).unwrap().as_const(), Some(3));
        assert_eq!(Expr::constant(-7).floordiv(2).unwrap().as_const(), Some(-4));
    }
}
