//! The argument checks of torch.nn layers beyond the linear, convolution, pooling and
//! normalisation ones in the parent module: recurrent layers and cells, multi-head attention,
//! transposed convolutions, instance norm and pixel shuffle. Messages follow PyTorch's
//! (torch 2.15, measured in eager mode).

use super::super::rules::ModuleInfo;
use super::super::{Dim, Shape};
use super::{channels, differ, fail, fmt_shape, is_true, spatial_rank, Check, ShapeErrorKind};

/// The check of a torch.nn leaf module's forward that the parent module does not make.
pub(super) fn module(m: &ModuleInfo, x: &Shape) -> Check {
    let attr = |n: &str| (m.attr)(n);
    match m.class {
        "RNN" | "LSTM" | "GRU" | "RNNCell" | "LSTMCell" | "GRUCell" => {
            recurrent_input(m.class, x, attr("input_size").as_int())
        }
        "MultiheadAttention" => match (attr("embed_dim").as_int(), x.last()) {
            (Some(e), Some(got)) if differ(got, &Dim::Known(e)) => fail(
                ShapeErrorKind::Size,
                Some(0),
                format!(
                    "was expecting embedding dimension of {e}, but got {got} (query {})",
                    fmt_shape(x)
                ),
            ),
            _ => Ok(()),
        },
        "ConvTranspose1d" | "ConvTranspose2d" | "ConvTranspose3d" => {
            let n = (m.class.as_bytes()[m.class.len() - 2] - b'0') as usize;
            spatial_rank(x, n, &m.class.to_ascii_lowercase())?;
            match attr("in_channels").as_int() {
                Some(c) => channels(x, n, &Dim::Known(c), ""),
                None => Ok(()),
            }
        }
        "InstanceNorm1d" | "InstanceNorm2d" | "InstanceNorm3d" => {
            // without affine weights or running statistics nothing has the channel count
            // (PyTorch only warns)
            let sized = is_true(&attr("affine")) || is_true(&attr("track_running_stats"));
            let n = (m.class.as_bytes()[m.class.len() - 2] - b'0') as usize;
            match attr("num_features").as_int() {
                Some(c) if sized && (x.len() == n + 1 || x.len() == n + 2) => {
                    let got = &x[x.len() - n - 1];
                    if differ(got, &Dim::Known(c)) {
                        return fail(
                            ShapeErrorKind::Size,
                            Some(0),
                            format!(
                                "expects {c} channels (num_features), gets {got} (input {})",
                                fmt_shape(x)
                            ),
                        );
                    }
                    Ok(())
                }
                _ => Ok(()),
            }
        }
        "PixelShuffle" => match attr("upscale_factor").as_int() {
            Some(r) if r > 0 => pixel_shuffle(x, r),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// `nn.LSTM` and its kin take a 2-d (unbatched) or 3-d input, their cells (`nn.LSTMCell`) a
/// 1-d or 2-d one; both a last size of `input_size`. Worded as PyTorch words each.
fn recurrent_input(class: &str, x: &Shape, input_size: Option<i64>) -> Check {
    let is_cell = class.ends_with("Cell");
    let batched = if is_cell { 2 } else { 3 };
    if x.len() != batched - 1 && x.len() != batched {
        return fail(
            ShapeErrorKind::Rank,
            Some(0),
            format!(
                "{class}: Expected input to be {}D or {batched}D, got {}D instead ({})",
                batched - 1,
                x.len(),
                fmt_shape(x)
            ),
        );
    }
    match (input_size, x.last()) {
        (Some(k), Some(got)) if differ(got, &Dim::Known(k)) => {
            let message = if is_cell {
                format!("input has inconsistent input_size: got {got} expected {k}")
            } else {
                format!("expects input.size(-1) equal to input_size {k}, gets {got}")
            };
            fail(
                ShapeErrorKind::Size,
                Some(0),
                format!("{message} (input {})", fmt_shape(x)),
            )
        }
        _ => Ok(()),
    }
}

/// `pixel_shuffle(x, r)`: channels (dim -3) divisible by r².
pub(super) fn pixel_shuffle(x: &Shape, r: i64) -> Check {
    if x.len() < 3 {
        return fail(
            ShapeErrorKind::Rank,
            Some(0),
            format!(
                "pixel_shuffle expects input to have at least 3 dimensions, gets {}-d {}",
                x.len(),
                fmt_shape(x)
            ),
        );
    }
    if let Dim::Known(c) = x[x.len() - 3] {
        if c % (r * r) != 0 {
            return fail(
                ShapeErrorKind::Size,
                Some(0),
                format!(
                    "pixel_shuffle expects the channel dimension to be divisible by upscale_factor² = {}, gets {c} (input {})",
                    r * r,
                    fmt_shape(x)
                ),
            );
        }
    }
    Ok(())
}
