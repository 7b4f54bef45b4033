//! Memory layouts (sizes and strides, in elements) of tensors with known sizes, for the one
//! shape check that depends on them: `view` of a non-contiguous tensor. `x.transpose(1, 2)`
//! and `x.permute(...)` reorder strides without copying, and `view` then succeeds only where
//! each group of merged or split dimensions is contiguous within itself — PyTorch's
//! "view size is not compatible with input tensor's size and stride".

/// Sizes and strides of a strided tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
}

impl Layout {
    /// A freshly allocated tensor: row-major strides.
    pub fn contiguous(sizes: &[i64]) -> Layout {
        let mut strides = vec![1; sizes.len()];
        for d in (0..sizes.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * sizes[d + 1].max(1);
        }
        Layout {
            sizes: sizes.to_vec(),
            strides,
        }
    }

    /// The same memory seen with dimensions reordered (`permute(order)`); None for an order
    /// that is not a permutation of this rank.
    pub fn permuted(&self, order: &[usize]) -> Option<Layout> {
        let mut seen = vec![false; self.sizes.len()];
        if order.len() != self.sizes.len() {
            return None;
        }
        for &d in order {
            if d >= seen.len() || std::mem::replace(&mut seen[d], true) {
                return None;
            }
        }
        Some(Layout {
            sizes: order.iter().map(|&d| self.sizes[d]).collect(),
            strides: order.iter().map(|&d| self.strides[d]).collect(),
        })
    }

    /// The layout `view(sizes)` gives, or None when no strides can express it over this
    /// memory (the view raises). Dimensions of this layout are walked from the last, in
    /// chunks that are contiguous in memory; the new sizes must tile each chunk exactly.
    pub fn viewed(&self, sizes: &[i64]) -> Option<Layout> {
        let numel: i64 = self.sizes.iter().product();
        if numel != sizes.iter().product::<i64>() {
            return None;
        }
        if numel == 0 || self.sizes.is_empty() {
            return Some(Layout::contiguous(sizes));
        }
        let mut strides = vec![0; sizes.len()];
        let mut view_d = sizes.len() as isize - 1;
        let mut chunk_stride = *self.strides.last().unwrap();
        let (mut chunk_numel, mut view_numel) = (1i64, 1i64);
        for d in (0..self.sizes.len()).rev() {
            chunk_numel *= self.sizes[d];
            let chunk_ends = d == 0
                || (self.sizes[d - 1] != 1 && self.strides[d - 1] != chunk_numel * chunk_stride);
            if !chunk_ends {
                continue;
            }
            while view_d >= 0 && (view_numel < chunk_numel || sizes[view_d as usize] == 1) {
                strides[view_d as usize] = view_numel * chunk_stride;
                view_numel *= sizes[view_d as usize];
                view_d -= 1;
            }
            if view_numel != chunk_numel {
                return None;
            }
            if d > 0 {
                chunk_stride = self.strides[d - 1];
                chunk_numel = 1;
                view_numel = 1;
            }
        }
        (view_d == -1).then(|| Layout {
            sizes: sizes.to_vec(),
            strides,
        })
    }

    /// Whether the elements fill a block of memory exactly once, in some order of dimensions
    /// (PyTorch's `is_non_overlapping_and_dense`).
    pub fn is_non_overlapping_and_dense(&self) -> bool {
        let mut dims: Vec<usize> = (0..self.sizes.len())
            .filter(|&d| self.sizes[d] != 1)
            .collect();
        dims.sort_by_key(|&d| self.strides[d]);
        let mut expected = 1;
        for d in dims {
            if self.strides[d] != expected {
                return false;
            }
            expected *= self.sizes[d];
        }
        true
    }

    /// The layout PyTorch's elementwise kernels (TensorIterator) give a new result of sizes
    /// `out` over these operands, scalars left out. Operands of the result's sizes and one
    /// dense layout give that layout; otherwise dimensions are ordered by the operands'
    /// strides, the first operand that tells two dimensions apart deciding, and the result is
    /// dense in that order. None for an operand that does not broadcast to `out`.
    pub fn elementwise(out: &[i64], operands: &[Layout]) -> Option<Layout> {
        let rank = out.len();
        let broadcast: Vec<Vec<i64>> = operands
            .iter()
            .map(|op| {
                let lead = rank.checked_sub(op.sizes.len())?;
                let mut strides = vec![0; rank];
                for (d, (&n, &st)) in op.sizes.iter().zip(&op.strides).enumerate() {
                    match (n, out[lead + d]) {
                        (n, o) if n == o => strides[lead + d] = st,
                        (1, _) => {}
                        _ => return None,
                    }
                }
                Some(strides)
            })
            .collect::<Option<_>>()?;
        if let Some(first) = operands.first() {
            let same = operands
                .iter()
                .all(|op| op.sizes == out && op.strides == first.strides);
            if same && first.is_non_overlapping_and_dense() {
                return Some(first.clone());
            }
            if operands
                .iter()
                .all(|op| op.sizes == out && op.is_contiguous())
            {
                return Some(Layout::contiguous(out));
            }
        }
        // 1: `a` goes outside `b`; -1: inside; 0: no operand tells
        let order = |a: usize, b: usize| -> i32 {
            for strides in &broadcast {
                let (sa, sb) = (strides[a], strides[b]);
                if sa == 0 || sb == 0 {
                    continue;
                }
                if sa != sb {
                    return if sa < sb { -1 } else { 1 };
                }
                if out[a] > out[b] {
                    return 1;
                }
            }
            0
        };
        // innermost first; an insertion sort that leaves undecided pairs in place
        let mut perm: Vec<usize> = (0..rank).rev().collect();
        for i in 1..rank {
            let mut moving = i;
            for j in (0..i).rev() {
                match order(perm[j], perm[moving]) {
                    1 => {
                        perm.swap(j, moving);
                        moving = j;
                    }
                    -1 => break,
                    _ => {}
                }
            }
        }
        let mut strides = vec![0; rank];
        let mut next = 1;
        for &d in &perm {
            strides[d] = next;
            next *= out[d].max(1);
        }
        Some(Layout {
            sizes: out.to_vec(),
            strides,
        })
    }

    pub fn is_contiguous(&self) -> bool {
        let c = Layout::contiguous(&self.sizes);
        self.sizes
            .iter()
            .zip(self.strides.iter().zip(&c.strides))
            .all(|(&n, (&a, &b))| n <= 1 || a == b)
    }
}

#[cfg(test)]
mod tests {
    use super::Layout;

    /// Expectations from torch 2.15: `torch.randn(sizes).permute(order).view(new)` raises or
    /// gives these strides.
    #[test]
    fn views_of_permuted_tensors_follow_pytorch() {
        let x = Layout::contiguous(&[2, 3, 4]);
        assert_eq!(x.strides, vec![12, 4, 1]);
        let t = x.permuted(&[0, 2, 1]).unwrap(); // transpose(1, 2): [2, 4, 3]
        assert_eq!(t.viewed(&[2, 12]), None);
        assert_eq!(
            t.viewed(&[2, 4, 3]).map(|l| l.strides),
            Some(vec![12, 1, 4])
        );
        assert_eq!(t.viewed(&[8, 3]), None);
        // splitting the leading dim of a transposed tensor is fine
        assert_eq!(
            t.viewed(&[1, 2, 4, 3]).map(|l| l.strides),
            Some(vec![24, 12, 1, 4])
        );
        assert!(!t.is_contiguous());
        // heads: [b, h, n, d] -> transpose(1, 2) -> view(b, n, h * d) only when n == 1
        let o = Layout::contiguous(&[2, 4, 5, 8])
            .permuted(&[0, 2, 1, 3])
            .unwrap();
        assert_eq!(o.viewed(&[2, 5, 32]), None);
        let o1 = Layout::contiguous(&[2, 4, 1, 8])
            .permuted(&[0, 2, 1, 3])
            .unwrap();
        assert!(o1.viewed(&[2, 1, 32]).is_some());
        // a contiguous tensor views as anything of its size
        assert!(x.viewed(&[6, 4]).is_some() && x.viewed(&[24]).is_some());
        assert_eq!(x.viewed(&[5, 5]), None);
        assert_eq!(x.permuted(&[0, 0, 1]), None);
    }

    /// Expectations from torch 2.15: the strides of `a + b`, and of `relu` / `clone` of a
    /// tensor that is not dense.
    #[test]
    fn elementwise_results_follow_tensor_iterator() {
        let t = Layout::contiguous(&[4, 5, 6]).permuted(&[2, 1, 0]).unwrap(); // (1, 6, 30)
        let c = Layout::contiguous(&[6, 5, 4]);
        let p = Layout::contiguous(&[5, 6, 4]).permuted(&[1, 0, 2]).unwrap(); // (4, 24, 1)
        let add = |a: &Layout, b: &Layout| Layout::elementwise(&[6, 5, 4], &[a.clone(), b.clone()]);
        assert_eq!(add(&t, &c).unwrap().strides, vec![1, 6, 30]);
        assert_eq!(add(&c, &t).unwrap().strides, vec![20, 4, 1]);
        assert_eq!(add(&t, &p).unwrap().strides, vec![1, 6, 30]);
        assert_eq!(add(&p, &t).unwrap().strides, vec![4, 24, 1]);
        assert_eq!(add(&p, &c).unwrap().strides, vec![4, 24, 1]);
        assert_eq!(add(&c, &p).unwrap().strides, vec![20, 4, 1]);
        // broadcast operands ([5, 1], [6, 1, 4]) say nothing about the dimensions they stretch
        let b = Layout::contiguous(&[5, 1]);
        assert_eq!(add(&t, &b).unwrap().strides, vec![1, 6, 30]);
        assert_eq!(add(&b, &t).unwrap().strides, vec![1, 6, 30]);
        let e = Layout::contiguous(&[6, 1, 4]);
        assert_eq!(add(&p, &e).unwrap().strides, vec![4, 24, 1]);
        assert_eq!(add(&e, &p).unwrap().strides, vec![4, 24, 1]);
        assert_eq!(
            Layout::elementwise(&[6, 5, 4], std::slice::from_ref(&t))
                .unwrap()
                .strides,
            vec![1, 6, 30]
        );
        // channels-last plus row-major: the first operand decides
        let cl = Layout::contiguous(&[2, 4, 5, 3])
            .permuted(&[0, 3, 1, 2])
            .unwrap();
        let rm = Layout::contiguous(&[2, 3, 4, 5]);
        let sum =
            |a: &Layout, b: &Layout| Layout::elementwise(&[2, 3, 4, 5], &[a.clone(), b.clone()]);
        assert_eq!(sum(&cl, &rm).unwrap().strides, vec![60, 1, 15, 3]);
        assert_eq!(sum(&rm, &cl).unwrap().strides, vec![60, 20, 5, 1]);
        // `torch.randn(3, 4, 5).unbind(1)[0]` is not dense; `u + u` is
        let u = Layout {
            sizes: vec![3, 5],
            strides: vec![20, 1],
        };
        assert!(!u.is_non_overlapping_and_dense());
        assert_eq!(
            Layout::elementwise(&[3, 5], &[u.clone(), u])
                .unwrap()
                .strides,
            vec![5, 1]
        );
        assert_eq!(
            Layout::elementwise(&[6, 5, 4], &[Layout::contiguous(&[7, 4])]),
            None
        );
    }
}
