//! Embedding lookup.

use ndarray::IxDyn;

use super::util::{contiguous_data, from_vec};
use super::{IndexTensor, KernelError, Result, Tensor};

/// `F.embedding(indices, weight)`: row `indices[i]` of a `(num_embeddings,
/// embedding_dim)` weight for every index, giving `indices.shape + [dim]`.
///
/// `padding_idx` only changes gradients, so the forward pass ignores it and
/// it has no parameter here. `max_norm` (which rewrites the weight in place
/// during the forward pass) is not supported. Negative and too-large indices
/// are errors, as in PyTorch.
pub fn embedding(indices: &IndexTensor, weight: &Tensor) -> Result<Tensor> {
    const OP: &str = "embedding";
    if weight.ndim() != 2 {
        return Err(KernelError::shapes(
            OP,
            indices.shape(),
            weight.shape(),
            "weight must be 2-D (num_embeddings, embedding_dim)",
        ));
    }
    let (rows, dim) = (weight.shape()[0], weight.shape()[1]);
    let table = contiguous_data(weight);
    let mut out = Vec::with_capacity(indices.len() * dim);
    for &i in indices.iter() {
        if i < 0 || i as u64 >= rows as u64 {
            return Err(KernelError::IndexOutOfRange {
                op: OP,
                index: i,
                size: rows,
            });
        }
        let r = i as usize;
        out.extend_from_slice(&table[r * dim..(r + 1) * dim]);
    }
    let mut shape = indices.shape().to_vec();
    shape.push(dim);
    from_vec(OP, &shape, out)
}

/// [`embedding`] for indices that arrive as f32 (the executor's single
/// value type); each must be a whole number.
pub fn embedding_from_f32(indices: &Tensor, weight: &Tensor) -> Result<Tensor> {
    let mut ids = Vec::with_capacity(indices.len());
    for &v in indices.iter() {
        // f32 holds every integer exactly up to 2^24, far beyond any vocabulary.
        if v.fract() != 0.0 || !v.is_finite() {
            return Err(KernelError::invalid(
                "embedding",
                indices.shape(),
                format!("index {v} is not an integer"),
            ));
        }
        ids.push(v as i64);
    }
    let idx = IndexTensor::from_shape_vec(IxDyn(indices.shape()), ids).map_err(|e| {
        KernelError::invalid("embedding", indices.shape(), format!("internal: {e}"))
    })?;
    embedding(&idx, weight)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testutil::{arange, assert_close_pointwise, t, Fixture};

    #[test]
    fn lookup_hand_checked() {
        let w = arange(&[4, 2]);
        let idx = IndexTensor::from_shape_vec(IxDyn(&[2, 2]), vec![3, 0, 1, 1]).unwrap();
        let y = embedding(&idx, &w).unwrap();
        assert_eq!(y.shape(), &[2, 2, 2]);
        assert_eq!(
            y.iter().copied().collect::<Vec<_>>(),
            vec![6., 7., 0., 1., 2., 3., 2., 3.]
        );
        let y0 = embedding(&IndexTensor::from_elem(IxDyn(&[]), 2), &w).unwrap();
        assert_eq!(y0, t(&[2], &[4., 5.]));
        assert_eq!(
            embedding_from_f32(&t(&[1], &[3.0]), &w).unwrap(),
            t(&[1, 2], &[6., 7.])
        );
    }

    #[test]
    fn out_of_range_is_an_error() {
        let w = arange(&[4, 2]);
        let bad = IndexTensor::from_shape_vec(IxDyn(&[2]), vec![1, 4]).unwrap();
        assert_eq!(
            embedding(&bad, &w).unwrap_err(),
            KernelError::IndexOutOfRange {
                op: "embedding",
                index: 4,
                size: 4
            }
        );
        let neg = IndexTensor::from_shape_vec(IxDyn(&[1]), vec![-1]).unwrap();
        assert!(embedding(&neg, &w).is_err());
        assert!(embedding(&neg, &arange(&[4])).is_err());
        assert!(embedding_from_f32(&t(&[1], &[1.5]), &w).is_err());
    }

    #[test]
    fn against_torch() {
        let fx = Fixture::load(include_str!(
            "../../../tests/fixtures/kernels/embedding.json"
        ));
        let c = fx.case("embedding");
        let y = embedding(&c.input_i64("indices"), &c.input("weight")).unwrap();
        assert_close_pointwise("embedding", &y, &c.expected(), 0.0);
    }
}
