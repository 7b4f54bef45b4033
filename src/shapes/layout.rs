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
}
