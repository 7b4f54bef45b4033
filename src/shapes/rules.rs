//! Shape rules: what each op produces, from the abstract values of its inputs. A rule that cannot
//! decide returns `Meta::Unknown` (or a tensor of unknown shape) rather than guessing.

use super::checks::{self, ShapeError};
use super::{concrete, shape_of, DType, Dim, Meta, Scalar, ScalarOrigin, Shape, TensorMeta};

/// A leaf module as the shape rules see it: its torch.nn class and constructor attributes.
pub struct ModuleInfo<'a> {
    pub class: &'a str,
    pub attr: &'a dyn Fn(&str) -> Meta,
}

/// Inputs of one op: positional and keyword arguments as abstract values.
pub struct Inputs<'a> {
    pub args: &'a [Meta],
    pub kwargs: &'a [(String, Meta)],
}

impl Inputs<'_> {
    /// The argument at `pos`, or the keyword `name`, bound as Python binds it; an argument
    /// given both ways is unknown (the call raises).
    pub fn get(&self, pos: usize, name: &str) -> Option<&Meta> {
        crate::catalog::bind::bind(self.args, self.kwargs, pos, name)
            .ok()
            .flatten()
    }
    fn int(&self, pos: usize, name: &str) -> Option<i64> {
        self.get(pos, name).and_then(Meta::as_int)
    }
    /// The `dtype=` keyword, when it is a known dtype.
    fn dtype_kwarg(&self) -> Option<DType> {
        self.kwargs.iter().find_map(|(k, m)| match m {
            Meta::Dtype(d) if k == "dtype" => Some(*d),
            _ => None,
        })
    }
    fn flag(&self, pos: usize, name: &str) -> bool {
        matches!(
            self.get(pos, name),
            Some(Meta::Scalar(Scalar::Bool(Some(true)), _))
        )
    }
}

fn same(t: &TensorMeta) -> Meta {
    Meta::Tensor(t.clone())
}

fn tensor(shape: Option<Shape>, dtype: DType) -> Meta {
    Meta::tensor(shape, dtype)
}

fn norm_dim(d: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let d = if d < 0 { d + r } else { d };
    (0..r.max(1)).contains(&d).then_some(d as usize)
}

/// Broadcast two shapes with numpy/torch rules.
pub fn broadcast(a: &Shape, b: &Shape) -> Option<Shape> {
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n].clone()
        } else {
            Dim::Known(1)
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n].clone()
        } else {
            Dim::Known(1)
        };
        out.push(match (&da, &db) {
            (Dim::Known(1), _) => db,
            (_, Dim::Known(1)) => da,
            (Dim::Known(x), Dim::Known(y)) if x == y => da,
            (Dim::Known(_), Dim::Known(_)) => return None,
            (Dim::Known(_), Dim::Unknown) => da,
            (Dim::Unknown, _) => db,
            // torch requires the two to agree at run time; the concrete one says what they are.
            (Dim::Sym(_), Dim::Known(_)) => db,
            (Dim::Known(_), Dim::Sym(_)) => da,
            (Dim::Sym(x), Dim::Sym(y)) if x == y => da,
            // Two different symbols may still broadcast (one could be 1): say so honestly.
            (Dim::Sym(_), Dim::Sym(_)) => Dim::Unknown,
            (Dim::Sym(_), Dim::Unknown) => da,
        });
    }
    Some(out)
}

fn scalar_dtype(m: &Meta) -> Option<DType> {
    match m {
        Meta::Scalar(Scalar::Float(_), _) => Some(DType::Float32),
        Meta::Scalar(Scalar::Int(_), _) => Some(DType::Int64),
        Meta::Scalar(Scalar::Bool(_), _) => Some(DType::Bool),
        _ => None,
    }
}

/// `pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side='right')`: the
/// sequences' common trailing sizes after the longest length and the batch (which comes first
/// with `batch_first`), in the first sequence's dtype (torch copies the others into it).
fn pad_sequence(inp: &Inputs) -> Meta {
    let Some(Meta::Seq(items)) = inp.get(0, "sequences") else {
        return Meta::Unknown;
    };
    let tensors: Option<Vec<&TensorMeta>> = items.iter().map(Meta::as_tensor).collect();
    let Some(first) = tensors.as_ref().and_then(|t| t.first()) else {
        return Meta::Unknown;
    };
    let batch_first = match inp.get(1, "batch_first") {
        None => false,
        Some(Meta::Scalar(Scalar::Bool(Some(b)), _)) => *b,
        Some(_) => return tensor(None, first.dtype),
    };
    let shapes: Option<Vec<&Shape>> = tensors
        .iter()
        .flatten()
        .map(|t| t.shape.as_ref().filter(|s| !s.is_empty()))
        .collect();
    let shape = shapes.and_then(|shapes| {
        let trailing = &shapes[0][1..];
        // trailing sizes that differ make torch raise: no shape
        if shapes.iter().any(|s| &s[1..] != trailing) {
            return None;
        }
        // the longest length: one symbolic length, or all known (a maximum of symbols is not
        // an `Expr`)
        let lengths: Vec<&Dim> = shapes.iter().map(|s| &s[0]).collect();
        let longest = if lengths.iter().all(|d| *d == lengths[0]) {
            lengths[0].clone()
        } else {
            Dim::Known(
                lengths
                    .iter()
                    .map(|d| d.known())
                    .collect::<Option<Vec<i64>>>()?
                    .into_iter()
                    .max()?,
            )
        };
        let batch = Dim::Known(shapes.len() as i64);
        let mut out = if batch_first {
            vec![batch, longest]
        } else {
            vec![longest, batch]
        };
        out.extend(trailing.iter().cloned());
        Some(out)
    });
    tensor(shape, first.dtype)
}

/// Element-wise binary op on tensors and/or scalars.
fn binary(op: &str, a: &Meta, b: &Meta) -> Meta {
    let compare = matches!(
        op,
        "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "logical_and" | "logical_or" | "and_" | "or_"
    );
    match (a, b) {
        (Meta::Tensor(x), Meta::Tensor(y)) => {
            let shape = match (&x.shape, &y.shape) {
                (Some(p), Some(q)) => broadcast(p, q),
                _ => None,
            };
            let dtype = if compare && !matches!(op, "and_" | "or_") {
                DType::Bool
            } else {
                DType::promote(x.dtype, y.dtype)
            };
            let dtype = if op == "truediv" && dtype.is_integral() {
                DType::Float32
            } else {
                dtype
            };
            tensor(shape, dtype)
        }
        // an operand of unknown kind may be a tensor that broadcasts the other: no shape
        (Meta::Tensor(t), Meta::Unknown) | (Meta::Unknown, Meta::Tensor(t)) => {
            tensor(None, if compare { DType::Bool } else { t.dtype })
        }
        (Meta::Tensor(t), s) | (s, Meta::Tensor(t)) => {
            let mut dtype = if compare { DType::Bool } else { t.dtype };
            if !compare
                && t.dtype.is_integral()
                && (matches!(s, Meta::Scalar(Scalar::Float(_), _)) || op == "truediv")
            {
                dtype = DType::Float32;
            }
            let _ = scalar_dtype(s);
            tensor(t.shape.clone(), dtype)
        }
        (Meta::Size(x), Meta::Size(y)) if op == "add" => {
            Meta::Size(x.iter().chain(y).cloned().collect())
        }
        // `x.shape[:-1] + (-1,)`: a Size plus a tuple of ints is a Size.
        (Meta::Size(x), seq @ Meta::Seq(_)) if op == "add" => match seq.as_dims() {
            Some(y) => Meta::Size(x.iter().chain(&y).cloned().collect()),
            None => Meta::Unknown,
        },
        (seq @ Meta::Seq(_), Meta::Size(y)) if op == "add" => match seq.as_dims() {
            Some(x) => Meta::Size(x.iter().chain(y).cloned().collect()),
            None => Meta::Unknown,
        },
        (Meta::Size(x), Meta::Size(y)) if op == "eq" || op == "ne" => {
            let v = match (concrete(x), concrete(y)) {
                (Some(p), Some(q)) => Some((p == q) == (op == "eq")),
                _ => None,
            };
            Meta::Scalar(Scalar::Bool(v), ScalarOrigin::Shape)
        }
        (Meta::Scalar(x, ox), Meta::Scalar(y, oy)) => {
            scalar_binary(op, x, y, combine_origin(*ox, *oy))
        }
        // A tensor's dtype is known when it is traced (Dynamo guards on it), so
        // `x.dtype == torch.float16` is decided.
        (Meta::Dtype(x), Meta::Dtype(y)) if op == "eq" || op == "ne" => Meta::Scalar(
            Scalar::Bool(Some((x == y) == (op == "eq"))),
            ScalarOrigin::Const,
        ),
        _ => Meta::Unknown,
    }
}

fn combine_origin(a: ScalarOrigin, b: ScalarOrigin) -> ScalarOrigin {
    use ScalarOrigin::*;
    match (a, b) {
        (Data, _) | (_, Data) => Data,
        (Shape, _) | (_, Shape) => Shape,
        _ => Const,
    }
}

/// Python arithmetic on scalars, keeping Python's int/float distinction.
pub fn scalar_binary(op: &str, x: &Scalar, y: &Scalar, origin: ScalarOrigin) -> Meta {
    let as_f = |s: &Scalar| match s {
        Scalar::Int(v) => v.map(|v| v as f64),
        Scalar::Float(v) => *v,
        Scalar::Bool(v) => v.map(|b| b as i64 as f64),
    };
    let as_i = |s: &Scalar| match s {
        Scalar::Int(v) => *v,
        Scalar::Bool(v) => v.map(|b| b as i64),
        Scalar::Float(_) => None,
    };
    let both_int = !matches!(x, Scalar::Float(_)) && !matches!(y, Scalar::Float(_));
    let out = |s: Scalar| Meta::Scalar(s, origin);
    match op {
        "eq" | "ne" | "lt" | "le" | "gt" | "ge" => {
            let v = as_f(x).zip(as_f(y)).map(|(a, b)| match op {
                "eq" => a == b,
                "ne" => a != b,
                "lt" => a < b,
                "le" => a <= b,
                "gt" => a > b,
                _ => a >= b,
            });
            out(Scalar::Bool(v))
        }
        "truediv" => out(Scalar::Float(
            as_f(x)
                .zip(as_f(y))
                .and_then(|(a, b)| (b != 0.0).then(|| a / b)),
        )),
        _ if both_int => {
            let v = as_i(x).zip(as_i(y)).and_then(|(a, b)| match op {
                "add" => a.checked_add(b),
                "sub" => a.checked_sub(b),
                "mul" => a.checked_mul(b),
                "floordiv" => (b != 0).then(|| {
                    a.div_euclid(b)
                        - if (a.rem_euclid(b) != 0) && (b < 0) {
                            1
                        } else {
                            0
                        }
                }),
                "mod" => (b != 0).then(|| ((a % b) + b) % b),
                "pow" => u32::try_from(b).ok().and_then(|e| a.checked_pow(e)),
                _ => None,
            });
            out(Scalar::Int(v))
        }
        _ => {
            let v = as_f(x).zip(as_f(y)).and_then(|(a, b)| match op {
                "add" => Some(a + b),
                "sub" => Some(a - b),
                "mul" => Some(a * b),
                "floordiv" => (b != 0.0).then(|| (a / b).floor()),
                "mod" => (b != 0.0).then(|| a - b * (a / b).floor()),
                "pow" => Some(a.powf(b)),
                _ => None,
            });
            out(Scalar::Float(v))
        }
    }
}

/// Output shape of a convolution/pool window along one dimension.
fn window(
    input: i64,
    kernel: i64,
    stride: i64,
    pad: i64,
    dilation: i64,
    ceil: bool,
) -> Option<i64> {
    if stride <= 0 {
        return None;
    }
    let eff = dilation * (kernel - 1) + 1;
    let span = input + 2 * pad - eff;
    if span < 0 {
        return None;
    }
    let mut out = if ceil {
        (span + stride - 1) / stride + 1
    } else {
        span / stride + 1
    };
    // torch: the last window must start inside the input or its left padding.
    if ceil && (out - 1) * stride >= input + pad {
        out -= 1;
    }
    Some(out)
}

/// `window` on a symbolic size: exact only without ceil mode (ceil adds a data-free but
/// size-dependent correction we do not model).
fn window_sym(input: &Dim, kernel: i64, stride: i64, pad: i64, dilation: i64, ceil: bool) -> Dim {
    match input {
        Dim::Known(x) => window(*x, kernel, stride, pad, dilation, ceil)
            .map(Dim::Known)
            .unwrap_or(Dim::Unknown),
        Dim::Sym(e) if !ceil && stride > 0 => {
            let span = e.add_const(2 * pad - dilation * (kernel - 1) - 1);
            span.floordiv(stride)
                .map(|q| Dim::from_expr(q.add_const(1)))
                .unwrap_or(Dim::Unknown)
        }
        _ => Dim::Unknown,
    }
}

fn tuple_n(m: &Meta, n: usize) -> Option<Vec<i64>> {
    match m.as_int_list()? {
        v if v.len() == 1 => Some(vec![v[0]; n]),
        v if v.len() == n => Some(v),
        _ => None,
    }
}

/// Spatial output of conv/pool over the trailing `n` dims of `t`.
fn spatial(
    t: &TensorMeta,
    n: usize,
    channels: Option<i64>,
    k: &Meta,
    s: &Meta,
    p: &Meta,
    d: &Meta,
    ceil: bool,
) -> Meta {
    let dtype = t.dtype;
    let Some(shape) = &t.shape else {
        return tensor(None, dtype);
    };
    if shape.len() < n + 1 {
        return tensor(None, dtype);
    }
    let k = tuple_n(k, n);
    let s = match s {
        Meta::None | Meta::Unknown => k.clone(),
        Meta::Seq(v) if v.is_empty() => k.clone(),
        m => tuple_n(m, n),
    };
    let padding = match p {
        Meta::Str(mode) if mode == "valid" => Some(vec![0; n]),
        Meta::Str(_) => None,
        m => tuple_n(m, n),
    };
    let d = tuple_n(d, n);
    let mut out = shape.clone();
    let base = shape.len() - n;
    if let Some(c) = channels {
        out[base - 1] = Dim::Known(c);
    }
    for i in 0..n {
        let dim = match (&shape[base + i], &k, &s, &d) {
            (x @ (Dim::Known(_) | Dim::Sym(_)), Some(k), Some(s), Some(d)) => match &padding {
                Some(p) => window_sym(x, k[i], s[i], p[i], d[i], ceil),
                // padding="same" keeps the spatial size (stride must be 1 for it to be allowed).
                None if matches!(p, Meta::Str(m) if m == "same") => x.clone(),
                None => Dim::Unknown,
            },
            _ => Dim::Unknown,
        };
        out[base + i] = dim;
    }
    tensor(Some(out), dtype)
}

/// A convolution whose output channel count is not known does not keep the input's.
fn unknown_channels(m: Meta, n: usize, channels: Option<i64>) -> Meta {
    match (m, channels) {
        (
            Meta::Tensor(TensorMeta {
                shape: Some(mut s),
                dtype,
            }),
            None,
        ) if s.len() > n => {
            let at = s.len() - n - 1;
            s[at] = Dim::Unknown;
            tensor(Some(s), dtype)
        }
        (m, _) => m,
    }
}

fn adaptive(t: &TensorMeta, n: usize, size: &Meta) -> Meta {
    let Some(shape) = &t.shape else {
        return tensor(None, t.dtype);
    };
    if shape.len() < n {
        return tensor(None, t.dtype);
    }
    let base = shape.len() - n;
    let sizes: Vec<Option<i64>> = match size {
        Meta::Seq(v) if v.len() == n => v.iter().map(Meta::as_int).collect(),
        m => match m.as_int() {
            Some(v) => vec![Some(v); n],
            None => return tensor(None, t.dtype),
        },
    };
    let mut out = shape.clone();
    for (i, s) in sizes.into_iter().enumerate() {
        if let Some(s) = s {
            out[base + i] = Dim::Known(s);
        }
    }
    tensor(Some(out), t.dtype)
}

fn reshape(t: &TensorMeta, dims: Option<Shape>) -> Meta {
    let Some(mut dims) = dims else {
        return tensor(None, t.dtype);
    };
    let total = t
        .shape
        .as_ref()
        .and_then(concrete)
        .map(|s| s.iter().product::<i64>());
    let minus: Vec<usize> = dims
        .iter()
        .enumerate()
        .filter(|(_, d)| **d == Dim::Known(-1))
        .map(|(i, _)| i)
        .collect();
    // Two -1s raise ("only one dimension can be inferred"); neither is a size.
    if minus.len() > 1 {
        for &i in &minus {
            dims[i] = Dim::Unknown;
        }
    }
    if minus.len() == 1 {
        let known: Option<i64> = dims
            .iter()
            .filter(|d| **d != Dim::Known(-1))
            .map(Dim::known)
            .product();
        dims[minus[0]] = match (total, known) {
            (Some(t), Some(k)) if k != 0 && t % k == 0 => Dim::Known(t / k),
            _ => Dim::Unknown,
        };
    }
    tensor(Some(dims), t.dtype)
}

/// `x.unflatten(dim, sizes)`: `dim` becomes `sizes`, whose one -1 takes what the others leave
/// of it. `checks` has rejected sizes that do not multiply up, where it could tell; a -1 over a
/// symbolic size stays symbolic only when the others divide it exactly, else it is unknown.
fn unflatten(t: &TensorMeta, dim: Option<i64>, sizes: Option<Shape>) -> Meta {
    let (Some(shape), Some(dim), Some(mut sizes)) = (&t.shape, dim, sizes) else {
        return tensor(None, t.dtype);
    };
    let Some(d) = norm_dim(dim, shape.len()).filter(|&d| d < shape.len()) else {
        return tensor(None, t.dtype);
    };
    let minus: Vec<usize> = (0..sizes.len())
        .filter(|&i| sizes[i] == Dim::Known(-1))
        .collect();
    match minus.as_slice() {
        [] => {}
        [i] => {
            let others: Option<i64> = sizes
                .iter()
                .enumerate()
                .filter(|(j, _)| j != i)
                .map(|(_, s)| s.known())
                .product();
            sizes[*i] = match (&shape[d], others) {
                (Dim::Known(n), Some(k)) if k > 0 && n % k == 0 => Dim::Known(n / k),
                (Dim::Sym(e), Some(k)) if k > 0 => e
                    .floordiv(k)
                    .filter(|q| q.mul(&super::Expr::constant(k)) == *e)
                    .map(Dim::from_expr)
                    .unwrap_or(Dim::Unknown),
                _ => Dim::Unknown,
            };
        }
        // two -1s raise ("only one dimension can be inferred")
        _ => return tensor(None, t.dtype),
    }
    let mut out: Shape = shape[..d].to_vec();
    out.extend(sizes);
    out.extend_from_slice(&shape[d + 1..]);
    tensor(Some(out), t.dtype)
}

fn flatten(t: &TensorMeta, start: i64, end: i64) -> Meta {
    let Some(shape) = &t.shape else {
        return tensor(None, t.dtype);
    };
    if shape.is_empty() {
        return tensor(Some(shape_of(&[1])), t.dtype);
    }
    let (Some(s), Some(e)) = (norm_dim(start, shape.len()), norm_dim(end, shape.len())) else {
        return tensor(None, t.dtype);
    };
    if s > e {
        return tensor(None, t.dtype);
    }
    let mut out: Shape = shape[..s].to_vec();
    out.push(Dim::product(&shape[s..=e]).unwrap_or(Dim::Unknown));
    out.extend_from_slice(&shape[e + 1..]);
    tensor(Some(out), t.dtype)
}

fn reduce(t: &TensorMeta, dims: Option<&Meta>, keepdim: bool, dtype: DType) -> Meta {
    let Some(shape) = &t.shape else {
        return tensor(None, dtype);
    };
    let dims: Vec<usize> = match dims {
        None | Some(Meta::None) => {
            return tensor(
                Some(if keepdim {
                    vec![Dim::Known(1); shape.len()]
                } else {
                    vec![]
                }),
                dtype,
            )
        }
        Some(m) => match m.as_int_list() {
            Some(v) => match v
                .iter()
                .map(|&d| norm_dim(d, shape.len()))
                .collect::<Option<Vec<_>>>()
            {
                Some(v) => v,
                None => return tensor(None, dtype),
            },
            None => return tensor(None, dtype),
        },
    };
    let out = shape
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            if dims.contains(&i) {
                keepdim.then_some(Dim::Known(1))
            } else {
                Some(d.clone())
            }
        })
        .collect();
    tensor(Some(out), dtype)
}

fn matmul(a: &TensorMeta, b: &TensorMeta) -> Meta {
    let dtype = DType::promote(a.dtype, b.dtype);
    let (Some(x), Some(y)) = (&a.shape, &b.shape) else {
        return tensor(None, dtype);
    };
    let out = match (x.len(), y.len()) {
        (0, _) | (_, 0) => return tensor(None, dtype),
        (1, 1) => vec![],
        (1, _) => {
            let mut o = y[..y.len() - 2].to_vec();
            o.push(y[y.len() - 1].clone());
            o
        }
        (_, 1) => x[..x.len() - 1].to_vec(),
        _ => {
            let Some(mut batch) = broadcast(&x[..x.len() - 2].to_vec(), &y[..y.len() - 2].to_vec())
            else {
                return tensor(None, dtype);
            };
            batch.push(x[x.len() - 2].clone());
            batch.push(y[y.len() - 1].clone());
            batch
        }
    };
    tensor(Some(out), dtype)
}

/// Shape of `t[index]` for basic and advanced indexing.
fn index(t: &TensorMeta, idx: &Meta) -> Meta {
    let Some(shape) = &t.shape else {
        return tensor(None, t.dtype);
    };
    let items: Vec<&Meta> = match idx {
        Meta::Seq(v) => v.iter().collect(),
        m => vec![m],
    };
    let consumed = items
        .iter()
        .filter(|m| !matches!(m, Meta::None | Meta::Ellipsis))
        .count();
    let mut out = Vec::new();
    let mut d = 0usize;
    let mut advanced: Option<Shape> = None;
    // Where the advanced (tensor) indices' dimensions go: in place of them when they are
    // adjacent (`a[:, idx]` is `[a0, *idx]`), first when a slice separates them (torch's rule).
    let mut advanced_at: Option<usize> = None;
    let mut separated = false;
    let mut after_advanced = false;
    // A list of ints inside the index (`x[..., [-2], :]`) indexes like an int64 tensor of its
    // length.
    let list_index = |v: &Vec<Meta>| {
        let ints = v
            .iter()
            .all(|m| matches!(m, Meta::Scalar(Scalar::Int(_), _)));
        ints.then(|| Meta::tensor(Some(vec![Dim::Known(v.len() as i64)]), DType::Int64))
    };
    let lists: Vec<Option<Meta>> = items
        .iter()
        .map(|m| match m {
            Meta::Seq(v) => list_index(v),
            _ => None,
        })
        .collect();
    let items: Vec<&Meta> = items
        .iter()
        .zip(&lists)
        .map(|(m, l)| l.as_ref().unwrap_or(m))
        .collect();
    for item in items {
        if advanced.is_some() && !matches!(item, Meta::Tensor(ix) if ix.dtype != DType::Bool) {
            after_advanced = true;
        }
        match item {
            Meta::None => out.push(Dim::Known(1)),
            Meta::Ellipsis => {
                let skip = shape.len().saturating_sub(consumed);
                out.extend_from_slice(&shape[d..(d + skip).min(shape.len())]);
                d += skip;
            }
            Meta::Slice(s) => {
                let Some(dim) = shape.get(d) else {
                    return tensor(None, t.dtype);
                };
                out.push(slice_len(dim, &s[0], &s[1], &s[2]));
                d += 1;
            }
            Meta::Scalar(Scalar::Int(_), _) => {
                d += 1;
            }
            Meta::Tensor(ix) if ix.dtype == DType::Bool => {
                // Boolean masks give a data-dependent length.
                let rank = ix.shape.as_ref().map(|s| s.len()).unwrap_or(1);
                d += rank;
                out.push(Dim::Unknown);
            }
            Meta::Tensor(ix) => {
                if after_advanced {
                    separated = true;
                }
                advanced_at.get_or_insert(out.len());
                advanced = match (&advanced, &ix.shape) {
                    (None, Some(s)) => Some(s.clone()),
                    (Some(a), Some(s)) => broadcast(a, s),
                    _ => None,
                };
                if advanced.is_none() {
                    return tensor(None, t.dtype);
                }
                out.push(Dim::Unknown); // placeholder replaced below
                out.pop();
                d += 1;
            }
            _ => return tensor(None, t.dtype),
        }
    }
    if d > shape.len() {
        return tensor(None, t.dtype);
    }
    out.extend_from_slice(&shape[d..]);
    if let Some(a) = advanced {
        let at = if separated {
            0
        } else {
            advanced_at.unwrap_or(0)
        };
        out.splice(at..at, a);
    }
    tensor(Some(out), t.dtype)
}

fn slice_len(dim: &Dim, start: &Meta, stop: &Meta, step: &Meta) -> Dim {
    let whole = |m: &Meta| matches!(m, Meta::None);
    if let Dim::Sym(_) = dim {
        // `[:]` keeps a symbolic dim; anything else would need its value.
        return if whole(start) && whole(stop) && (whole(step) || step.as_int() == Some(1)) {
            dim.clone()
        } else {
            Dim::Unknown
        };
    }
    let Dim::Known(n) = dim else {
        return Dim::Unknown;
    };
    let n = *n;
    let step = match step {
        Meta::None => 1,
        m => match m.as_int() {
            Some(s) if s > 0 => s,
            _ => return Dim::Unknown,
        },
    };
    let clamp = |v: i64| if v < 0 { (v + n).max(0) } else { v.min(n) };
    let s = match start {
        Meta::None => 0,
        m => match m.as_int() {
            Some(v) => clamp(v),
            None => return Dim::Unknown,
        },
    };
    let e = match stop {
        Meta::None => n,
        m => match m.as_int() {
            Some(v) => clamp(v),
            None => return Dim::Unknown,
        },
    };
    Dim::Known(if e > s { (e - s + step - 1) / step } else { 0 })
}

fn getitem(container: &Meta, idx: &Meta) -> Meta {
    match container {
        Meta::Tensor(t) => index(t, idx),
        Meta::Size(s) => match idx {
            Meta::Slice(sl) => {
                let Some(n) = i64::try_from(s.len()).ok() else {
                    return Meta::Unknown;
                };
                let len = slice_len(&Dim::Known(n), &sl[0], &sl[1], &sl[2]);
                let start = match &sl[0] {
                    Meta::None => 0,
                    m => m
                        .as_int()
                        .map(|v| if v < 0 { (v + n).max(0) } else { v.min(n) })
                        .unwrap_or(0),
                };
                match (len, sl[2].as_int().unwrap_or(1)) {
                    (Dim::Known(l), 1) => {
                        Meta::Size(s[start as usize..(start + l) as usize].to_vec())
                    }
                    _ => Meta::Unknown,
                }
            }
            m => match m.as_int().and_then(|i| norm_dim(i, s.len())) {
                Some(i) => Meta::Scalar(Scalar::Int(s[i].known()), ScalarOrigin::Shape),
                None => Meta::Scalar(Scalar::Int(None), ScalarOrigin::Shape),
            },
        },
        Meta::Seq(v) => match idx {
            // `chunks[:3]`: a tuple sliced is the tuple of the elements the slice picks
            Meta::Slice(sl) => match slice_indices(v.len(), sl) {
                Some(picked) => Meta::Seq(picked.into_iter().map(|i| v[i].clone()).collect()),
                None => Meta::Unknown,
            },
            m => match m.as_int() {
                Some(i) => {
                    let i = if i < 0 { i + v.len() as i64 } else { i };
                    v.get(i as usize).cloned().unwrap_or(Meta::Unknown)
                }
                None => Meta::Unknown,
            },
        },
        _ => Meta::Unknown,
    }
}

/// The indices `seq[start:stop:step]` picks from a sequence of `len` elements, as Python's
/// `slice.indices` bounds them; None when a bound is not a known int or the step is 0 (which
/// raises).
fn slice_indices(len: usize, sl: &[Meta; 3]) -> Option<Vec<usize>> {
    let n = i64::try_from(len).ok()?;
    let bound = |m: &Meta| match m {
        Meta::None => Some(None),
        m => m.as_int().map(Some),
    };
    let (start, stop, step) = (bound(&sl[0])?, bound(&sl[1])?, bound(&sl[2])?);
    let step = step.unwrap_or(1);
    if step == 0 {
        return None;
    }
    let (lower, upper) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let clamp = |v: i64| {
        if v < 0 {
            (v + n).max(lower)
        } else {
            v.min(upper)
        }
    };
    let start = start.map_or(if step > 0 { lower } else { upper }, clamp);
    let stop = stop.map_or(if step > 0 { upper } else { lower }, clamp);
    let mut out = vec![];
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        out.push(i as usize);
        i += step;
    }
    Some(out)
}

fn chunks(t: &TensorMeta, dim: i64, sizes: impl Fn(i64) -> Option<Vec<i64>>) -> Meta {
    let Some(shape) = &t.shape else {
        return Meta::Unknown;
    };
    let Some(d) = norm_dim(dim, shape.len()) else {
        return Meta::Unknown;
    };
    let Some(n) = shape[d].known() else {
        return Meta::Unknown;
    };
    match sizes(n) {
        Some(parts) => Meta::Seq(
            parts
                .into_iter()
                .map(|p| {
                    let mut s = shape.clone();
                    s[d] = Dim::Known(p);
                    tensor(Some(s), t.dtype)
                })
                .collect(),
        ),
        None => Meta::Unknown,
    }
}

/// `split` into the sections `sizes` of a tensor whose split dimension (or shape) is not
/// known: one part per section, sized by its section where that is known, and otherwise as
/// the input.
fn sections(t: &TensorMeta, dim: i64, sizes: &[Meta]) -> Meta {
    let part = |size: &Meta| {
        let shape = t.shape.as_ref().and_then(|shape| {
            let d = norm_dim(dim, shape.len())?;
            let mut s = shape.clone();
            s[d] = size.as_int().map(Dim::Known).unwrap_or(Dim::Unknown);
            Some(s)
        });
        tensor(shape, t.dtype)
    };
    Meta::Seq(sizes.iter().map(part).collect())
}

/// The shape of nested lists of numbers, as `torch.tensor` makes it.
fn data_shape(data: &Meta) -> Option<Shape> {
    match data {
        Meta::Seq(items) => {
            let mut out = vec![Dim::Known(items.len() as i64)];
            if let Some(first) = items.first() {
                out.extend(data_shape(first)?);
            }
            Some(out)
        }
        Meta::Scalar(..) => Some(vec![]),
        _ => None,
    }
}

fn data_is_floating(data: &Meta) -> bool {
    match data {
        Meta::Seq(items) => items.iter().any(data_is_floating),
        Meta::Scalar(crate::shapes::Scalar::Float(_), _) => true,
        _ => false,
    }
}

fn cat(items: &Meta, dim: i64, stack: bool) -> Meta {
    let Meta::Seq(items) = items else {
        return Meta::Unknown;
    };
    // `torch.cat` skips 1-D empty tensors (a legacy rule caches start from).
    let kept: Vec<Meta> = items
        .iter()
        .filter(|m| {
            stack
                || !matches!(m.as_tensor().and_then(|t| t.shape.as_ref()), Some(s) if s.len() == 1 && s[0] == Dim::Known(0))
        })
        .cloned()
        .collect();
    let items = if kept.is_empty() { items.clone() } else { kept };
    let ts: Option<Vec<&TensorMeta>> = items.iter().map(Meta::as_tensor).collect();
    let Some(ts) = ts else { return Meta::Unknown };
    let Some(first) = ts.first() else {
        return Meta::Unknown;
    };
    let dtype = ts
        .iter()
        .fold(first.dtype, |d, t| DType::promote(d, t.dtype));
    let shapes: Option<Vec<&Shape>> = ts.iter().map(|t| t.shape.as_ref()).collect();
    let Some(shapes) = shapes else {
        return tensor(None, dtype);
    };
    let rank = shapes[0].len();
    if stack {
        let Some(d) = norm_dim(dim, rank + 1) else {
            return tensor(None, dtype);
        };
        let mut out = shapes[0].clone();
        out.insert(d, Dim::Known(shapes.len() as i64));
        return tensor(Some(out), dtype);
    }
    let Some(d) = norm_dim(dim, rank) else {
        return tensor(None, dtype);
    };
    let mut out = shapes[0].clone();
    let total = shapes
        .iter()
        .try_fold(crate::shapes::Expr::constant(0), |acc, s| {
            s.get(d).and_then(Dim::expr).map(|e| acc.add(&e))
        });
    out[d] = total.map(Dim::from_expr).unwrap_or(Dim::Unknown);
    tensor(Some(out), dtype)
}

pub(super) fn varargs_dims(inp: &Inputs, from: usize, name: &str) -> Option<Shape> {
    match inp.args.get(from) {
        Some(m @ (Meta::Seq(_) | Meta::Size(_))) if inp.args.len() == from + 1 => m.as_dims(),
        // A lone unknown argument may be a whole tuple (`x.view(shape)`): not even the rank
        // is known, and a made-up rank 1 would make later dimension checks fail.
        Some(Meta::Unknown) if inp.args.len() == from + 1 => None,
        Some(_) => Meta::Seq(inp.args[from..].to_vec()).as_dims(),
        None => inp.get(usize::MAX, name).and_then(Meta::as_dims),
    }
}

fn permute(t: &TensorMeta, order: Option<Vec<i64>>) -> Meta {
    let (Some(shape), Some(order)) = (&t.shape, order) else {
        return tensor(None, t.dtype);
    };
    let idx: Option<Vec<usize>> = order.iter().map(|&d| norm_dim(d, shape.len())).collect();
    match idx {
        Some(idx) if idx.len() == shape.len() => tensor(
            Some(idx.iter().map(|&i| shape[i].clone()).collect()),
            t.dtype,
        ),
        _ => tensor(None, t.dtype),
    }
}

/// `grouped_mm(a, b, offs=...)`: groups of rows of a 2-D `a` against a 3-D `b` give
/// `[rows, N]`; two 3-D operands are a batch `[G, M, N]`; two 2-D operands split the shared
/// `K` into `len(offs)` groups, `[G, M, N]`.
fn grouped_mm(a: Option<&TensorMeta>, b: Option<&TensorMeta>, offs: Option<&Meta>) -> Meta {
    let (Some(a), Some(b)) = (a, b) else {
        return Meta::Unknown;
    };
    let dtype = a.dtype;
    let (Some(x), Some(y)) = (&a.shape, &b.shape) else {
        return tensor(None, dtype);
    };
    let groups = offs
        .and_then(Meta::as_tensor)
        .and_then(|o| o.shape.as_ref())
        .and_then(|s| s.first().cloned());
    let out = match (x.len(), y.len()) {
        (2, 3) => Some(vec![x[0].clone(), y[2].clone()]),
        (3, 3) => Some(vec![x[0].clone(), x[1].clone(), y[2].clone()]),
        (2, 2) => groups.map(|g| vec![g, x[0].clone(), y[1].clone()]),
        _ => None,
    };
    tensor(out, dtype)
}

fn transpose(t: &TensorMeta, a: Option<i64>, b: Option<i64>) -> Meta {
    let Some(shape) = &t.shape else {
        return tensor(None, t.dtype);
    };
    match (
        a.and_then(|a| norm_dim(a, shape.len())),
        b.and_then(|b| norm_dim(b, shape.len())),
    ) {
        (Some(a), Some(b)) => {
            let mut s = shape.clone();
            s.swap(a, b);
            tensor(Some(s), t.dtype)
        }
        _ => tensor(None, t.dtype),
    }
}

/// What a call that will raise produces: nothing is known of its result but what it was
/// meant to be (a tensor of the first tensor argument's dtype), never a made-up shape.
pub fn raised(args: &[Meta]) -> Meta {
    let first_tensor = args.iter().find_map(|m| match m {
        Meta::Tensor(t) => Some(t.dtype),
        Meta::Seq(v) => v.iter().find_map(|m| m.as_tensor().map(|t| t.dtype)),
        _ => None,
    });
    match first_tensor {
        Some(d) => tensor(None, d),
        None => Meta::Unknown,
    }
}

/// The rule for a function or method with PyTorch's argument checks first: `Err` when the call
/// will raise when it runs (`checks`), the result's abstract value otherwise (unknown where
/// the rule cannot tell).
pub fn infer(name: &str, inp: &Inputs) -> Result<Meta, ShapeError> {
    checks::call(name, inp)?;
    Ok(rule(name, inp))
}

/// [`infer`] for callers that only want a value: a call that will raise gives an unknown one.
pub fn call(name: &str, inp: &Inputs) -> Meta {
    infer(name, inp).unwrap_or_else(|_| raised(inp.args))
}

/// [`infer`] for a torch.nn leaf module's forward.
pub fn infer_module(m: &ModuleInfo, inp: &Inputs) -> Result<Meta, ShapeError> {
    checks::module(m, inp)?;
    Ok(module_rule(m, inp))
}

/// [`infer_module`] for callers that only want a value.
pub fn call_module(m: &ModuleInfo, inp: &Inputs) -> Meta {
    infer_module(m, inp).unwrap_or_else(|_| raised(inp.args))
}

/// Rule for a function or method on tensors, by its short name (`relu`, `view`, `add`, …);
/// for `call_method` argument 0 is the tensor itself. The arguments are assumed valid
/// (`infer` checks them first).
fn rule(name: &str, inp: &Inputs) -> Meta {
    // The first operand passed by keyword (`F.scaled_dot_product_attention(query=q, key=k,
    // value=v)`, `torch.softmax(input=x, dim=-1)`).
    let a0 = match inp.args.first() {
        Some(a) => a.clone(),
        None => ["input", "query", "self"]
            .iter()
            .find_map(|k| {
                inp.kwargs
                    .iter()
                    .find(|(n, _)| n == k)
                    .map(|(_, m)| m.clone())
            })
            .unwrap_or(Meta::Unknown),
    };
    if let Meta::Scalar(x, origin) = &a0 {
        if let Some(m) = math_on_scalar(name, x, *origin) {
            return m;
        }
    }
    let t0 = a0.as_tensor();
    match name {
        "add" | "sub" | "mul" | "truediv" | "div" | "floordiv" | "mod" | "pow" | "eq" | "ne"
        | "lt" | "le" | "gt" | "ge" | "and_" | "or_" | "maximum" | "minimum" | "logical_and"
        | "logical_or" | "floor_divide" | "remainder" | "iadd" | "imul" | "isub" | "itruediv"
        | "add_" | "mul_" | "sub_" | "div_" | "atan2" | "fmod" | "xor" | "bitwise_and"
        | "bitwise_or" | "bitwise_xor" | "logical_xor" | "multiply" | "subtract" | "divide"
        | "true_divide" => {
            let op = match name {
                // torch's aliases: `torch.multiply` is `torch.mul`, and so on.
                "multiply" => "mul",
                "subtract" => "sub",
                "divide" | "true_divide" => "truediv",
                // Bitwise ops broadcast and promote as `&` does.
                "bitwise_and" | "bitwise_xor" | "xor" => "and_",
                "bitwise_or" => "or_",
                "logical_xor" => "logical_and",
                "div" | "itruediv" | "div_" => "truediv",
                "floor_divide" => "floordiv",
                "remainder" | "fmod" => "mod",
                "iadd" | "add_" => "add",
                "imul" | "mul_" => "mul",
                "isub" | "sub_" => "sub",
                "maximum" | "minimum" | "atan2" => "add",
                n => n,
            };
            let b = inp.get(1, "other").cloned().unwrap_or(Meta::Unknown);
            binary(op, &a0, &b)
        }
        "einsum" => einsum(inp),
        // `torch.gather(input, dim, index)`: the index's shape, the input's dtype.
        "gather" => match (t0, inp.get(2, "index").and_then(Meta::as_tensor)) {
            (Some(t), Some(i)) => tensor(i.shape.clone(), t.dtype),
            _ => Meta::Unknown,
        },
        // `torch.index_select(input, dim, index)`: `dim` takes the (1-D) index's length.
        "index_select" => match (
            t0,
            inp.int(1, "dim"),
            inp.get(2, "index").and_then(Meta::as_tensor),
        ) {
            (Some(t), Some(d), Some(i)) => match (&t.shape, &i.shape) {
                (Some(shape), Some(ishape)) if ishape.len() <= 1 => {
                    match norm_dim(d, shape.len().max(1)) {
                        Some(d) if d < shape.len() => {
                            let mut out = shape.clone();
                            out[d] = ishape.first().cloned().unwrap_or(Dim::Known(1));
                            tensor(Some(out), t.dtype)
                        }
                        _ => Meta::Unknown,
                    }
                }
                _ => tensor(None, t.dtype),
            },
            _ => Meta::Unknown,
        },
        "matmul" | "bmm" | "mm" => match (
            t0,
            inp.get(1, "other")
                .or(inp.get(1, "mat2"))
                .and_then(Meta::as_tensor),
        ) {
            (Some(a), Some(b)) => matmul(a, b),
            _ => Meta::Unknown,
        },
        // `(..., 2)` float pairs as complex numbers (`checks` holds the last size to 2)
        "view_as_complex" => match t0 {
            Some(t) => match t.dtype.to_complex() {
                Some(d) => tensor(
                    t.shape
                        .as_ref()
                        .and_then(|s| Some(s[..s.len().checked_sub(1)?].to_vec())),
                    d,
                ),
                // float16 makes complex32, which `DType` does not name
                None => Meta::Unknown,
            },
            None => Meta::Unknown,
        },
        // complex numbers as `(..., 2)` float pairs
        "view_as_real" => match t0.and_then(|t| Some((t, t.dtype.to_real()?))) {
            Some((t, d)) => tensor(
                t.shape.as_ref().map(|s| {
                    let mut s = s.clone();
                    s.push(Dim::Known(2));
                    s
                }),
                d,
            ),
            None => Meta::Unknown,
        },
        // complex numbers from two float tensors of one dtype (`checks` holds them to it):
        // `polar(abs, angle)`, `complex(real, imag)`, broadcast together
        "polar" | "complex" => {
            let parts = if name == "polar" {
                ("abs", "angle")
            } else {
                ("real", "imag")
            };
            match (t0, inp.get(1, parts.1).and_then(Meta::as_tensor)) {
                (Some(a), Some(b)) => match a.dtype.to_complex() {
                    Some(d) if a.dtype == b.dtype => tensor(
                        match (&a.shape, &b.shape) {
                            (Some(p), Some(q)) => broadcast(p, q),
                            _ => None,
                        },
                        d,
                    ),
                    _ => Meta::Unknown,
                },
                _ => Meta::Unknown,
            }
        }
        // `abs` of complex numbers is their modulus, in the parts' dtype
        "abs" if t0.is_some_and(|t| t.dtype.is_complex()) => match t0 {
            Some(t) => tensor(t.shape.clone(), t.dtype.to_real().unwrap_or(t.dtype)),
            None => Meta::Unknown,
        },
        "pad_sequence" => pad_sequence(inp),
        // the outer product of two vectors; torch raises on any other rank
        "outer" | "ger" => match (
            t0,
            inp.get(1, "vec2")
                .or(inp.get(1, "other"))
                .and_then(Meta::as_tensor),
        ) {
            (Some(a), Some(b)) => {
                let side = |t: &TensorMeta| match t.shape.as_deref() {
                    Some([n]) => Some(Some(n.clone())),
                    Some(_) => None,
                    None => Some(None),
                };
                match (side(a), side(b)) {
                    (Some(n), Some(m)) => tensor(
                        n.zip(m).map(|(n, m)| vec![n, m]),
                        DType::promote(a.dtype, b.dtype),
                    ),
                    _ => Meta::Unknown,
                }
            }
            _ => Meta::Unknown,
        },
        // `input + mat1 @ mat2`: `input` broadcasts to the product's shape.
        "addmm" | "baddbmm" => match (
            inp.get(1, "mat1")
                .or(inp.get(1, "batch1"))
                .and_then(Meta::as_tensor),
            inp.get(2, "mat2")
                .or(inp.get(2, "batch2"))
                .and_then(Meta::as_tensor),
        ) {
            (Some(a), Some(b)) => matmul(a, b),
            _ => Meta::Unknown,
        },
        "neg"
        | "pos"
        | "invert"
        | "abs"
        | "relu"
        | "relu_"
        | "gelu"
        | "silu"
        | "sigmoid"
        | "tanh"
        | "hardswish"
        | "hardsigmoid"
        | "relu6"
        | "leaky_relu"
        | "elu"
        | "selu"
        | "celu"
        | "mish"
        | "softplus"
        | "hardtanh"
        | "dropout"
        | "dropout2d"
        | "dropout1d"
        | "alpha_dropout"
        | "contiguous"
        | "clone"
        | "detach"
        | "exp"
        | "log"
        | "sqrt"
        | "rsqrt"
        | "sin"
        | "cos"
        | "erf"
        | "softmax"
        | "log_softmax"
        | "layer_norm"
        | "batch_norm"
        | "group_norm"
        | "instance_norm"
        | "rms_norm"
        | "normalize"
        | "clamp"
        | "clip"
        | "clamp_"
        | "sigmoid_"
        | "tanh_"
        | "masked_fill"
        | "masked_fill_"
        | "zeros_like"
        | "ones_like"
        | "rand_like"
        | "randn_like"
        | "empty_like"
        | "full_like"
        | "square"
        | "reciprocal"
        | "floor"
        | "ceil"
        | "round"
        | "sign"
        | "tril"
        | "triu"
        | "cumsum"
        | "flip"
        | "roll"
        | "local_response_norm"
        | "requires_grad_"
        | "fill_"
        | "zero_"
        | "copy_"
        | "hardswish_"
        | "logsigmoid"
        | "softsign"
        | "tanhshrink"
        | "silu_"
        | "gelu_"
        | "relu6_"
        | "exp_"
        | "nan_to_num"
        | "sgn"
        | "log1p"
        | "expm1"
        | "pow_"
        | "erfinv" => match t0 {
            Some(t) => {
                let mut m = same(t);
                if name == "erf"
                    || name == "exp"
                    || name == "sqrt"
                    || name == "softmax"
                    || name == "log_softmax"
                {
                    if let Meta::Tensor(tm) = &mut m {
                        if tm.dtype.is_integral() {
                            tm.dtype = DType::Float32;
                        }
                    }
                }
                // A cumulative sum of bools or ints accumulates in int64.
                if name == "cumsum" {
                    if let Meta::Tensor(tm) = &mut m {
                        if tm.dtype.is_integral() {
                            tm.dtype = DType::Int64;
                        }
                    }
                }
                // `dtype=` casts the input before the operation (`cumsum`, `softmax`).
                if let Some(d) = inp.dtype_kwarg() {
                    if matches!(name, "cumsum" | "softmax" | "log_softmax") {
                        if let Meta::Tensor(tm) = &mut m {
                            tm.dtype = d;
                        }
                    }
                }
                m
            }
            None => Meta::Unknown,
        },
        "logical_not" | "isnan" | "isinf" | "isfinite" => t0
            .map(|t| tensor(t.shape.clone(), DType::Bool))
            .unwrap_or(Meta::Unknown),
        "float" | "double" | "half" | "bfloat16" | "long" | "int" | "bool" | "to" | "type"
        | "type_as" => {
            let Some(t) = t0 else { return Meta::Unknown };
            let dtype = match name {
                "float" => Some(DType::Float32),
                "double" => Some(DType::Float64),
                "half" => Some(DType::Float16),
                "bfloat16" => Some(DType::Bfloat16),
                "long" => Some(DType::Int64),
                "int" => Some(DType::Int32),
                "bool" => Some(DType::Bool),
                "type_as" => inp
                    .get(1, "other")
                    .and_then(Meta::as_tensor)
                    .map(|o| o.dtype),
                _ => inp
                    .args
                    .iter()
                    .skip(1)
                    .chain(inp.kwargs.iter().map(|(_, v)| v))
                    .find_map(|m| match m {
                        Meta::Dtype(d) => Some(*d),
                        Meta::Tensor(o) => Some(o.dtype),
                        _ => None,
                    }),
            };
            tensor(t.shape.clone(), dtype.unwrap_or(t.dtype))
        }
        "where" => {
            let parts: Vec<Meta> = (0..3)
                .map(|i| inp.args.get(i).cloned().unwrap_or(Meta::Unknown))
                .collect();
            let ab = binary("add", &parts[1], &parts[2]);
            binary("mul", &ab, &parts[0])
        }
        "linear" => {
            let (Some(x), Some(w)) = (t0, inp.get(1, "weight").and_then(Meta::as_tensor)) else {
                return Meta::Unknown;
            };
            match (&x.shape, &w.shape) {
                (Some(xs), Some(ws)) if !xs.is_empty() && ws.len() == 2 => {
                    let mut s = xs.clone();
                    *s.last_mut().unwrap() = ws[0].clone();
                    tensor(Some(s), x.dtype)
                }
                _ => tensor(None, x.dtype),
            }
        }
        "multi_head_attention_forward" => mha_forward(inp, t0),
        "scaled_dot_product_attention" => {
            let Some(q) = t0 else {
                return Meta::Unknown;
            };
            let k = inp.get(1, "key").and_then(Meta::as_tensor);
            let v = inp.get(2, "value").and_then(Meta::as_tensor);
            let gqa = match inp.get(7, "enable_gqa") {
                None => Some(false),
                Some(Meta::Scalar(Scalar::Bool(b), _)) => *b,
                Some(_) => None,
            };
            let shape = match (
                &q.shape,
                k.and_then(|k| k.shape.as_ref()),
                v.and_then(|v| v.shape.as_ref()),
                gqa,
            ) {
                (Some(qs), Some(ks), Some(vs), Some(gqa)) => sdpa_shape(qs, ks, vs, gqa),
                _ => None,
            };
            tensor(shape, q.dtype)
        }
        "size" => match t0.and_then(|t| t.shape.clone()) {
            Some(shape) => match inp.get(1, "dim").and_then(Meta::as_int) {
                Some(d) => match norm_dim(d, shape.len()) {
                    Some(i) => Meta::Scalar(Scalar::Int(shape[i].known()), ScalarOrigin::Shape),
                    None => Meta::Unknown,
                },
                None if inp.get(1, "dim").is_some() => {
                    Meta::Scalar(Scalar::Int(None), ScalarOrigin::Shape)
                }
                None => Meta::Size(shape),
            },
            None if inp.get(1, "dim").is_some() => {
                Meta::Scalar(Scalar::Int(None), ScalarOrigin::Shape)
            }
            None => Meta::Unknown,
        },
        // `torch.is_tensor(x)` is a Python bool about what `x` is, not a tensor: True for a
        // tensor, as Dynamo knows it while it traces
        "is_tensor" => Meta::Scalar(
            Scalar::Bool(match &a0 {
                Meta::Tensor(_) => Some(true),
                Meta::Unknown => None,
                _ => Some(false),
            }),
            ScalarOrigin::Const,
        ),
        // dtype predicates are plain bools: Dynamo guards on the dtype, like on a shape
        "is_floating_point" | "is_complex" => Meta::Scalar(
            Scalar::Bool(t0.map(|t| match name {
                "is_complex" => t.dtype.is_complex(),
                _ => t.dtype.is_floating(),
            })),
            ScalarOrigin::Shape,
        ),
        "dim" | "ndimension" => match t0.and_then(|t| t.shape.as_ref()) {
            Some(s) => Meta::Scalar(Scalar::Int(Some(s.len() as i64)), ScalarOrigin::Shape),
            None => Meta::Scalar(Scalar::Int(None), ScalarOrigin::Shape),
        },
        "numel" | "len" => match t0.and_then(|t| t.shape.as_ref()) {
            Some(s) if name == "len" => Meta::Scalar(
                Scalar::Int(s.first().and_then(Dim::known)),
                ScalarOrigin::Shape,
            ),
            Some(s) => Meta::Scalar(
                Scalar::Int(s.iter().map(Dim::known).product()),
                ScalarOrigin::Shape,
            ),
            None => match &a0 {
                Meta::Size(s) if name == "len" => {
                    Meta::Scalar(Scalar::Int(Some(s.len() as i64)), ScalarOrigin::Shape)
                }
                Meta::Seq(s) if name == "len" => {
                    Meta::Scalar(Scalar::Int(Some(s.len() as i64)), ScalarOrigin::Const)
                }
                _ => Meta::Scalar(Scalar::Int(None), ScalarOrigin::Shape),
            },
        },
        "getattr" => match (&a0, inp.args.get(1)) {
            (Meta::Tensor(t), Some(Meta::Str(attr))) => match attr.as_str() {
                "shape" => t.shape.clone().map(Meta::Size).unwrap_or(Meta::Unknown),
                "dtype" => Meta::Dtype(t.dtype),
                // Example inputs and parameters are CPU tensors (the device `run` executes
                // on), and the device is a constant of the trace, as Dynamo specialises it.
                "device" => Meta::Device("cpu".into()),
                "ndim" => t
                    .shape
                    .as_ref()
                    .map(|s| Meta::Scalar(Scalar::Int(Some(s.len() as i64)), ScalarOrigin::Shape))
                    .unwrap_or(Meta::Unknown),
                "T" | "mT" | "data" => match (attr.as_str(), &t.shape) {
                    ("T", Some(s)) => tensor(Some(s.iter().rev().cloned().collect()), t.dtype),
                    ("mT", Some(s)) if s.len() >= 2 => {
                        let mut s = s.clone();
                        let n = s.len();
                        s.swap(n - 1, n - 2);
                        tensor(Some(s), t.dtype)
                    }
                    ("data", _) => same(t),
                    _ => tensor(None, t.dtype),
                },
                // a complex tensor's parts are views of its shape in the parts' dtype; a real
                // tensor's `.real` is itself (its `.imag` raises)
                "real" | "imag" => match t.dtype.to_real() {
                    Some(d) => tensor(t.shape.clone(), d),
                    None if attr == "real" => same(t),
                    None => Meta::Unknown,
                },
                _ => Meta::Unknown,
            },
            _ => Meta::Unknown,
        },
        "getitem" => getitem(&a0, inp.args.get(1).unwrap_or(&Meta::Unknown)),
        "view" | "reshape" => match t0 {
            Some(t) => reshape(t, varargs_dims(inp, 1, "shape")),
            None => Meta::Unknown,
        },
        "view_as" | "reshape_as" | "expand_as" => {
            match inp.get(1, "other").and_then(Meta::as_tensor) {
                Some(o) => tensor(o.shape.clone(), t0.map(|t| t.dtype).unwrap_or(o.dtype)),
                None => Meta::Unknown,
            }
        }
        "expand" => match (t0, varargs_dims(inp, 1, "size")) {
            (Some(t), Some(dims)) => {
                let src = t.shape.clone().unwrap_or_default();
                let off = dims.len().saturating_sub(src.len());
                let out = dims
                    .iter()
                    .enumerate()
                    .map(|(i, d)| match d {
                        // -1 keeps the size of the dimension it stands over; over a new
                        // leading dimension, or a shape of unknown rank, that size is unknown
                        Dim::Known(-1) if t.shape.is_some() && i >= off => src[i - off].clone(),
                        Dim::Known(-1) => Dim::Unknown,
                        d => d.clone(),
                    })
                    .collect();
                tensor(Some(out), t.dtype)
            }
            (Some(t), None) => tensor(None, t.dtype),
            _ => Meta::Unknown,
        },
        "repeat" => match (t0, varargs_dims(inp, 1, "repeats")) {
            (Some(t), Some(reps)) => match &t.shape {
                Some(s) => {
                    let mut src = vec![Dim::Known(1); reps.len().saturating_sub(s.len())];
                    src.extend(s.iter().cloned());
                    let out = src
                        .iter()
                        .zip(&reps)
                        .map(|(a, b)| match (a.known(), b.known()) {
                            (Some(x), Some(y)) => Dim::Known(x * y),
                            _ => Dim::Unknown,
                        })
                        .collect();
                    tensor(Some(out), t.dtype)
                }
                None => tensor(None, t.dtype),
            },
            _ => Meta::Unknown,
        },
        // `F.pad(x, (left, right, top, bottom, …))`: pairs from the last dimension backwards.
        "pad" => match (
            t0,
            inp.get(1, "pad")
                .and_then(Meta::as_dims)
                .and_then(|d| concrete(&d)),
        ) {
            (Some(t), Some(p)) if p.len() % 2 == 0 => match &t.shape {
                Some(shape) if p.len() / 2 <= shape.len() => {
                    let mut out = shape.clone();
                    let n = out.len();
                    for (i, pair) in p.chunks(2).enumerate() {
                        let grow = pair[0] + pair[1];
                        out[n - 1 - i] = match &out[n - 1 - i] {
                            Dim::Known(x) if x + grow >= 0 => Dim::Known(x + grow),
                            Dim::Sym(e) => Dim::from_expr(e.add_const(grow)),
                            _ => Dim::Unknown,
                        };
                    }
                    tensor(Some(out), t.dtype)
                }
                _ => tensor(None, t.dtype),
            },
            (Some(t), _) => tensor(None, t.dtype),
            _ => Meta::Unknown,
        },
        "flatten" => match t0 {
            Some(t) => flatten(
                t,
                inp.int(1, "start_dim").unwrap_or(0),
                inp.int(2, "end_dim").unwrap_or(-1),
            ),
            None => Meta::Unknown,
        },
        "unflatten" => match t0 {
            Some(t) => unflatten(
                t,
                inp.int(1, "dim"),
                inp.get(2, "sizes").and_then(Meta::as_dims),
            ),
            None => Meta::Unknown,
        },
        "permute" => match t0 {
            Some(t) => permute(t, varargs_dims(inp, 1, "dims").and_then(|d| concrete(&d))),
            None => Meta::Unknown,
        },
        "transpose" | "swapaxes" => match t0 {
            Some(t) => transpose(t, inp.int(1, "dim0"), inp.int(2, "dim1")),
            None => Meta::Unknown,
        },
        "t" => match t0 {
            Some(t) if t.shape.as_ref().map(|s| s.len() < 2).unwrap_or(false) => same(t),
            Some(t) => transpose(t, Some(0), Some(1)),
            None => Meta::Unknown,
        },
        "unsqueeze" => match (t0, inp.int(1, "dim")) {
            (Some(t), Some(d)) => match &t.shape {
                Some(s) => match norm_dim(d, s.len() + 1) {
                    Some(i) => {
                        let mut s = s.clone();
                        s.insert(i, Dim::Known(1));
                        tensor(Some(s), t.dtype)
                    }
                    None => tensor(None, t.dtype),
                },
                None => tensor(None, t.dtype),
            },
            _ => Meta::Unknown,
        },
        "squeeze" => match t0 {
            Some(t) => match (&t.shape, inp.get(1, "dim").and_then(Meta::as_int_list)) {
                (Some(s), Some(dims)) => {
                    let dims: Vec<usize> =
                        dims.iter().filter_map(|&d| norm_dim(d, s.len())).collect();
                    let out = s
                        .iter()
                        .enumerate()
                        .filter(|(i, d)| !(dims.contains(i) && **d == Dim::Known(1)))
                        .map(|(_, d)| d.clone())
                        .collect();
                    tensor(Some(out), t.dtype)
                }
                (Some(s), None) if s.iter().all(|d| d.known().is_some()) => tensor(
                    Some(s.iter().filter(|d| **d != Dim::Known(1)).cloned().collect()),
                    t.dtype,
                ),
                _ => tensor(None, t.dtype),
            },
            None => Meta::Unknown,
        },
        "chunk" => match (t0, inp.int(1, "chunks")) {
            (Some(t), Some(c)) if c > 0 => chunks(t, inp.int(2, "dim").unwrap_or(0), |n| {
                let size = (n + c - 1) / c;
                if size == 0 {
                    return Some(vec![]);
                }
                let mut parts = vec![];
                let mut left = n;
                while left > 0 {
                    parts.push(size.min(left));
                    left -= size.min(left);
                }
                Some(parts)
            }),
            _ => Meta::Unknown,
        },
        "split" | "split_with_sizes" | "tensor_split" if name != "tensor_split" => match t0 {
            Some(t) => {
                let dim = inp.int(2, "dim").unwrap_or(0);
                match inp
                    .get(1, "split_size_or_sections")
                    .or(inp.get(1, "split_size"))
                    .or(inp.get(1, "split_sizes"))
                {
                    Some(Meta::Seq(v)) => {
                        let sizes: Option<Vec<i64>> = v.iter().map(Meta::as_int).collect();
                        match chunks(t, dim, |_| sizes.clone()) {
                            // the sections fix how many parts there are, whatever else is
                            // unknown: a loop over them or `list(...)` of them can go on
                            Meta::Unknown => sections(t, dim, &v),
                            known => known,
                        }
                    }
                    Some(m) => match m.as_int() {
                        Some(sz) if sz > 0 => chunks(t, dim, |n| {
                            let mut parts = vec![];
                            let mut left = n;
                            while left > 0 {
                                parts.push(sz.min(left));
                                left -= sz.min(left);
                            }
                            Some(parts)
                        }),
                        _ => Meta::Unknown,
                    },
                    None => Meta::Unknown,
                }
            }
            None => Meta::Unknown,
        },
        "unbind" => match t0 {
            Some(t) => chunks(t, inp.int(1, "dim").unwrap_or(0), |n| {
                Some(vec![1; n as usize])
            })
            .map_seq(|m| squeeze_dim(m, inp.int(1, "dim").unwrap_or(0))),
            None => Meta::Unknown,
        },
        "cat" | "concat" | "concatenate" => cat(&a0, inp.int(1, "dim").unwrap_or(0), false),
        "stack" => cat(&a0, inp.int(1, "dim").unwrap_or(0), true),
        "meshgrid" => meshgrid(inp),
        "fold" => match (t0, inp.get(1, "output_size"), inp.get(2, "kernel_size")) {
            (Some(t), Some(o), Some(k)) => folded(t, o, k),
            _ => Meta::Unknown,
        },
        "interpolate" | "upsample" => match t0 {
            Some(t) => resized(t, inp.get(1, "size"), inp.get(2, "scale_factor")),
            None => Meta::Unknown,
        },
        "repeat_interleave" => match (t0, inp.get(1, "repeats")) {
            (Some(t), Some(r)) if !r.is_tensor() => {
                let Some(times) = r.as_int() else {
                    return tensor(None, t.dtype);
                };
                let Some(shape) = &t.shape else {
                    return tensor(None, t.dtype);
                };
                let scaled = |d: &Dim| {
                    d.known()
                        .map(|n| Dim::Known(n * times))
                        .unwrap_or(Dim::Unknown)
                };
                match inp.int(2, "dim") {
                    Some(d) => match norm_dim(d, shape.len()) {
                        Some(d) if d < shape.len() => {
                            let mut out = shape.clone();
                            out[d] = scaled(&shape[d]);
                            tensor(Some(out), t.dtype)
                        }
                        _ => Meta::Unknown,
                    },
                    // Without `dim` the input is flattened first.
                    None => {
                        let numel = shape.iter().map(Dim::known).product::<Option<i64>>();
                        let d = numel.map(Dim::Known).unwrap_or(Dim::Unknown);
                        tensor(Some(vec![scaled(&d)]), t.dtype)
                    }
                }
            }
            (Some(t), _) => tensor(None, t.dtype),
            _ => Meta::Unknown,
        },
        "sum" | "mean" | "amax" | "amin" | "prod" | "nansum" | "nanmean" | "logsumexp" | "var"
        | "std" | "norm" | "vector_norm" | "all" | "any" => {
            let Some(t) = t0 else { return Meta::Unknown };
            let dtype = match name {
                "all" | "any" => DType::Bool,
                "sum" | "prod" if t.dtype.is_integral() => DType::Int64,
                _ => t.dtype,
            };
            // `norm(input, p, dim)` and `linalg.vector_norm(x, ord, dim)` take the order first.
            let dim_pos = if matches!(name, "norm" | "vector_norm") {
                2
            } else {
                1
            };
            reduce(
                t,
                inp.get(dim_pos, "dim"),
                inp.flag(dim_pos + 1, "keepdim"),
                dtype,
            )
        }
        "max" | "min" | "argmax" | "argmin" | "median" => {
            let Some(t) = t0 else { return Meta::Unknown };
            match inp.get(1, "dim") {
                Some(Meta::Tensor(o)) => binary("add", &a0, &Meta::Tensor(o.clone())),
                Some(d) if !matches!(d, Meta::None) => {
                    let keep = inp.flag(2, "keepdim");
                    if name.starts_with("arg") {
                        reduce(t, Some(d), keep, DType::Int64)
                    } else {
                        Meta::Seq(vec![
                            reduce(t, Some(d), keep, t.dtype),
                            reduce(t, Some(d), keep, DType::Int64),
                        ])
                    }
                }
                _ => tensor(
                    Some(vec![]),
                    if name.starts_with("arg") {
                        DType::Int64
                    } else {
                        t.dtype
                    },
                ),
            }
        }
        // `x.new_ones(size, dtype=...)`: the size given, the receiver's dtype unless told.
        "new_ones" | "new_zeros" | "new_empty" | "new_full" => match t0 {
            Some(t) => {
                let dtype = inp.kwargs.iter().find_map(|(k, m)| match (k.as_str(), m) {
                    ("dtype", Meta::Dtype(d)) => Some(*d),
                    _ => None,
                });
                let dims = if name == "new_full" {
                    inp.get(1, "size").and_then(Meta::as_dims)
                } else {
                    varargs_dims(inp, 1, "size")
                };
                tensor(dims, dtype.unwrap_or(t.dtype))
            }
            None => Meta::Unknown,
        },
        // `(values, indices)`: `k` along `dim` (default the last).
        // `x.narrow(dim, start, length)`: `length` along `dim`
        "narrow" => match (t0, inp.int(1, "dim"), inp.int(3, "length")) {
            (Some(t), Some(d), Some(len)) => match &t.shape {
                Some(shape) => match norm_dim(d, shape.len()).filter(|&d| d < shape.len()) {
                    Some(d) => {
                        let mut out = shape.clone();
                        out[d] = Dim::Known(len);
                        tensor(Some(out), t.dtype)
                    }
                    None => tensor(None, t.dtype),
                },
                None => tensor(None, t.dtype),
            },
            (Some(t), _, _) => tensor(None, t.dtype),
            _ => Meta::Unknown,
        },
        "pixel_shuffle" => match t0 {
            Some(t) => shuffled(t, inp.int(1, "upscale_factor"), true),
            None => Meta::Unknown,
        },
        "pixel_unshuffle" => match t0 {
            Some(t) => shuffled(t, inp.int(1, "downscale_factor"), false),
            None => Meta::Unknown,
        },
        "topk" => {
            let Some(t) = t0 else { return Meta::Unknown };
            let shape = match (&t.shape, inp.int(1, "k")) {
                (Some(shape), Some(k)) => norm_dim(inp.int(2, "dim").unwrap_or(-1), shape.len())
                    .filter(|&d| d < shape.len())
                    .map(|d| {
                        let mut out = shape.clone();
                        out[d] = Dim::Known(k);
                        out
                    }),
                _ => None,
            };
            Meta::Seq(vec![
                tensor(shape.clone(), t.dtype),
                tensor(shape, DType::Int64),
            ])
        }
        // `(values, indices)`, both the input's shape.
        "sort" => match t0 {
            Some(t) => Meta::Seq(vec![same(t), tensor(t.shape.clone(), DType::Int64)]),
            None => Meta::Unknown,
        },
        "argsort" => t0
            .map(|t| tensor(t.shape.clone(), DType::Int64))
            .unwrap_or(Meta::Unknown),
        "histc" => match t0 {
            Some(t) => tensor(
                Some(vec![Dim::Known(inp.int(1, "bins").unwrap_or(100))]),
                t.dtype,
            ),
            None => Meta::Unknown,
        },
        "index_add" | "index_add_" | "index_copy" | "index_copy_" | "index_fill"
        | "index_fill_" | "scatter" | "scatter_" | "scatter_add" | "scatter_add_" => {
            t0.map(same).unwrap_or(Meta::Unknown)
        }
        "grouped_mm" | "_grouped_mm" => grouped_mm(
            t0,
            inp.get(1, "mat_b").and_then(Meta::as_tensor),
            inp.get(2, "offs"),
        ),
        "item" => match t0 {
            Some(t) if t.dtype.is_floating() => {
                Meta::Scalar(Scalar::Float(None), ScalarOrigin::Data)
            }
            Some(t) if t.dtype == DType::Bool => {
                Meta::Scalar(Scalar::Bool(None), ScalarOrigin::Data)
            }
            // a Python complex, which `Scalar` has no kind for
            Some(t) if t.dtype.is_complex() => Meta::Unknown,
            Some(_) => Meta::Scalar(Scalar::Int(None), ScalarOrigin::Data),
            None => Meta::Scalar(Scalar::Float(None), ScalarOrigin::Data),
        },
        "adaptive_avg_pool2d" | "adaptive_max_pool2d" => match t0 {
            Some(t) => adaptive(t, 2, inp.get(1, "output_size").unwrap_or(&Meta::Unknown)),
            None => Meta::Unknown,
        },
        "adaptive_avg_pool1d" | "adaptive_max_pool1d" => match t0 {
            Some(t) => adaptive(t, 1, inp.get(1, "output_size").unwrap_or(&Meta::Unknown)),
            None => Meta::Unknown,
        },
        "max_pool3d" | "avg_pool3d" | "max_pool2d" | "avg_pool2d" | "max_pool1d" | "avg_pool1d" => {
            match t0 {
                Some(t) => {
                    let n = if name.ends_with("3d") {
                        3
                    } else if name.ends_with("2d") {
                        2
                    } else {
                        1
                    };
                    let k = inp.get(1, "kernel_size").cloned().unwrap_or(Meta::Unknown);
                    let s = inp.get(2, "stride").cloned().unwrap_or(Meta::None);
                    let p = inp.get(3, "padding").cloned().unwrap_or(Meta::int(0));
                    // `return_indices=True` gives (values, indices), which this rule does not build
                    if name.starts_with("max") && inp.flag(6, "return_indices") {
                        return Meta::Unknown;
                    }
                    let (d, ceil_pos) = if name.starts_with("max") {
                        (inp.get(4, "dilation").cloned().unwrap_or(Meta::int(1)), 5)
                    } else {
                        (Meta::int(1), 4)
                    };
                    spatial(t, n, None, &k, &s, &p, &d, inp.flag(ceil_pos, "ceil_mode"))
                }
                None => Meta::Unknown,
            }
        }
        "conv2d" | "conv1d" => {
            let (Some(x), Some(w)) = (t0, inp.get(1, "weight").and_then(Meta::as_tensor)) else {
                return Meta::Unknown;
            };
            let n = if name == "conv2d" { 2 } else { 1 };
            let Some(ws) = w.shape.as_ref().filter(|ws| ws.len() == n + 2) else {
                return tensor(None, x.dtype);
            };
            let k = Meta::Seq(
                ws[2..]
                    .iter()
                    .map(|d| d.known().map(Meta::int).unwrap_or(Meta::Unknown))
                    .collect(),
            );
            let s = inp.get(3, "stride").cloned().unwrap_or(Meta::int(1));
            let p = inp.get(4, "padding").cloned().unwrap_or(Meta::int(0));
            let d = inp.get(5, "dilation").cloned().unwrap_or(Meta::int(1));
            unknown_channels(
                spatial(x, n, ws[0].known(), &k, &s, &p, &d, false),
                n,
                ws[0].known(),
            )
        }
        "embedding" => {
            let (Some(ix), Some(w)) = (t0, inp.get(1, "weight").and_then(Meta::as_tensor)) else {
                return Meta::Unknown;
            };
            match (&ix.shape, &w.shape) {
                (Some(s), Some(ws)) if ws.len() == 2 => {
                    let mut s = s.clone();
                    s.push(ws[1].clone());
                    tensor(Some(s), w.dtype)
                }
                _ => tensor(None, w.dtype),
            }
        }
        "_assert" | "_assert_async" | "print" => Meta::None,
        // `torch.tensor(data)`: the shape is the nesting of the data (`[]` is `[0]`).
        "tensor" => {
            let dtype = inp.dtype_kwarg();
            let data = inp.args.first().unwrap_or(&Meta::Unknown);
            let floating = data_is_floating(data);
            let default = if floating || matches!(data, Meta::Seq(v) if v.is_empty()) {
                DType::Float32
            } else {
                DType::Int64
            };
            tensor(data_shape(data), dtype.unwrap_or(default))
        }
        "zeros" | "ones" | "empty" | "randn" | "rand" | "full" => {
            // `full(size, fill_value)` takes one size argument; the others take sizes as
            // varargs too.
            let dims = if name == "full" {
                inp.get(0, "size").and_then(Meta::as_dims)
            } else {
                varargs_dims(inp, 0, "size")
            };
            let dtype = inp.dtype_kwarg();
            // `full` without a dtype takes the fill value's: int64 for an int, bool for a bool.
            let fill = (name == "full")
                .then(|| inp.get(1, "fill_value").and_then(scalar_dtype))
                .flatten();
            tensor(dims, dtype.or(fill).unwrap_or(DType::Float32))
        }
        // `linspace(start, end, steps)` and `logspace(start, end, steps, base=10.0)`: `steps`
        // points, of the default dtype (float32) unless one is given; torch raises on a
        // negative count.
        "linspace" | "logspace" => {
            let steps = inp.int(2, "steps").filter(|&n| n >= 0);
            tensor(
                Some(vec![steps.map(Dim::Known).unwrap_or(Dim::Unknown)]),
                inp.dtype_kwarg().unwrap_or(DType::Float32),
            )
        }
        "arange" => {
            // `arange(end)`, `arange(start, end, step=1)`, each bound positionally or by
            // keyword; a lone positional is `end` only when no bound is a keyword (torch has
            // no `arange(end, step=...)`, which raises).
            let kw = |n: &str| inp.kwargs.iter().find(|(k, _)| k == n).map(|(_, m)| m);
            let a = inp.args;
            let bounds_kw = ["start", "end", "step"].iter().any(|n| kw(n).is_some());
            let (start, end, step) = match a {
                [e] if !bounds_kw => (None, Some(e), None),
                _ => (
                    a.first().or(kw("start")),
                    a.get(1).or(kw("end")),
                    a.get(2).or(kw("step")),
                ),
            };
            let one = Meta::int(1);
            let zero = Meta::int(0);
            let (start, step) = (start.unwrap_or(&zero), step.unwrap_or(&one));
            let bounds = [start, end.unwrap_or(&Meta::Unknown), step];
            // int64 unless a dtype is given or a bound is a float.
            let floating = bounds
                .iter()
                .any(|m| matches!(m, Meta::Scalar(Scalar::Float(_), _)));
            let len = match (start.as_int(), end.and_then(Meta::as_int), step.as_int()) {
                (Some(s), Some(e), Some(st)) if !floating && st != 0 => {
                    Some((e - s + st - st.signum()) / st)
                }
                _ => None,
            };
            let dtype = inp.dtype_kwarg();
            let default = if floating {
                DType::Float32
            } else {
                DType::Int64
            };
            tensor(
                Some(vec![len
                    .map(|l| Dim::Known(l.max(0)))
                    .unwrap_or(Dim::Unknown)]),
                dtype.unwrap_or(default),
            )
        }
        // int64 indices, one row per element that holds (a count only the data knows); with
        // `as_tuple=True` one 1-d index tensor per dimension
        "nonzero" | "argwhere" => {
            let rank = t0.and_then(|t| t.shape.as_ref()).map(Vec::len);
            let as_tuple = matches!(
                inp.get(1, "as_tuple"),
                Some(Meta::Scalar(Scalar::Bool(Some(true)), _))
            );
            match (as_tuple, rank) {
                (true, Some(r)) => {
                    Meta::Seq(vec![tensor(Some(vec![Dim::Unknown]), DType::Int64); r])
                }
                (true, None) => Meta::Unknown,
                (false, r) => tensor(
                    r.map(|r| vec![Dim::Unknown, Dim::Known(r as i64)]),
                    DType::Int64,
                ),
            }
        }
        _ => match t0 {
            // Unknown op on a tensor: a tensor of unknown shape is the honest answer.
            Some(t) => tensor(None, t.dtype),
            None => Meta::Unknown,
        },
    }
}

trait MapSeq {
    fn map_seq(self, f: impl Fn(Meta) -> Meta) -> Meta;
}
impl MapSeq for Meta {
    fn map_seq(self, f: impl Fn(Meta) -> Meta) -> Meta {
        match self {
            Meta::Seq(v) => Meta::Seq(v.into_iter().map(f).collect()),
            m => m,
        }
    }
}

/// `scaled_dot_product_attention`'s output, `(N..., Hq, L, Ev)`: the batch dims of query,
/// key and value broadcast together (learned queries of batch 1 against keys of batch 2 give
/// batch 2), `L` is the query's, `Ev` the value's. With `enable_gqa` the head dim is the
/// query's (its key and value have fewer heads). None where they do not broadcast (torch
/// raises) or a rank is too small.
fn sdpa_shape(q: &Shape, k: &Shape, v: &Shape, gqa: bool) -> Option<Shape> {
    let lead = if gqa { 3 } else { 2 };
    if q.len() < lead || k.len() < lead || v.len() < lead {
        return None;
    }
    let batch = |s: &Shape| s[..s.len() - lead].to_vec();
    let mut out = broadcast(&broadcast(&batch(q), &batch(k))?, &batch(v))?;
    out.extend_from_slice(&q[q.len() - lead..q.len() - 1]);
    out.push(v[v.len() - 1].clone());
    Some(out)
}

/// `F.multi_head_attention_forward(query, key, value, ..., out_proj_weight, ...)`:
/// `(attn_output, attn_weights)`. The output is the query's shape, `(L, N, E)` or unbatched
/// `(L, E)`, with the last size the output projection's rows (`linear` with
/// `out_proj_weight`); the weights are None with `need_weights=False`, else a tensor whose
/// shape is not worked out here.
fn mha_forward(inp: &Inputs, query: Option<&TensorMeta>) -> Meta {
    let Some(q) = query else {
        return Meta::Unknown;
    };
    let rows = inp
        .get(11, "out_proj_weight")
        .and_then(Meta::as_tensor)
        .and_then(|w| w.shape.as_ref())
        .filter(|w| w.len() == 2)
        .map(|w| w[0].clone());
    let shape = match (&q.shape, rows) {
        (Some(s), Some(rows)) if matches!(s.len(), 2 | 3) => {
            let mut s = s.clone();
            *s.last_mut().unwrap() = rows;
            Some(s)
        }
        _ => None,
    };
    let weights = match inp.get(15, "need_weights") {
        Some(Meta::Scalar(Scalar::Bool(Some(false)), _)) => Meta::None,
        None | Some(Meta::Scalar(Scalar::Bool(Some(true)), _)) => tensor(None, q.dtype),
        Some(_) => Meta::Unknown,
    };
    Meta::Seq(vec![tensor(shape, q.dtype), weights])
}

fn squeeze_dim(m: Meta, dim: i64) -> Meta {
    match m {
        Meta::Tensor(TensorMeta {
            shape: Some(mut s),
            dtype,
        }) => match norm_dim(dim, s.len()) {
            Some(d) => {
                s.remove(d);
                tensor(Some(s), dtype)
            }
            None => tensor(None, dtype),
        },
        m => m,
    }
}

/// Rule for calling a torch.nn leaf module, its arguments assumed valid.
/// What a recurrent layer returns whatever its input: its output and state as tensors of
/// unknown shape, so reading them (`h, c = cell(x, state)`) gives tensors, never a shape taken
/// from another operand. Other layers: unknown.
fn outputs_of_unknown_input(class: &str) -> Meta {
    let t = || tensor(None, DType::Float32);
    match class {
        "LSTM" => Meta::Seq(vec![t(), Meta::Seq(vec![t(), t()])]),
        "GRU" | "RNN" | "LSTMCell" | "MultiheadAttention" => Meta::Seq(vec![t(), t()]),
        "GRUCell" | "RNNCell" => t(),
        _ => Meta::Unknown,
    }
}

/// `pixel_shuffle(x, r)`: `[*, C, H, W]` to `[*, C / r², H·r, W·r]`; `pixel_unshuffle` the
/// other way. Symbolic sizes scale with `r`; an uneven division leaves the size unknown.
fn shuffled(t: &TensorMeta, factor: Option<i64>, up: bool) -> Meta {
    let (Some(shape), Some(r)) = (&t.shape, factor.filter(|&r| r > 0)) else {
        return tensor(None, t.dtype);
    };
    if shape.len() < 3 {
        return tensor(None, t.dtype);
    }
    let n = shape.len();
    let scale = |d: &Dim, k: i64| match d.expr() {
        Some(e) => Dim::from_expr(e.scale(k)),
        None => Dim::Unknown,
    };
    let divide = |d: &Dim, k: i64| match d {
        Dim::Known(v) if v % k == 0 => Dim::Known(v / k),
        _ => Dim::Unknown,
    };
    let mut out = shape.clone();
    if up {
        out[n - 3] = divide(&shape[n - 3], r * r);
        out[n - 2] = scale(&shape[n - 2], r);
        out[n - 1] = scale(&shape[n - 1], r);
    } else {
        out[n - 3] = scale(&shape[n - 3], r * r);
        out[n - 2] = divide(&shape[n - 2], r);
        out[n - 1] = divide(&shape[n - 1], r);
    }
    tensor(Some(out), t.dtype)
}

fn module_rule(m: &ModuleInfo, inp: &Inputs) -> Meta {
    let a0 = inp.args.first().cloned().unwrap_or(Meta::Unknown);
    let Some(t) = a0.as_tensor() else {
        return outputs_of_unknown_input(m.class);
    };
    let attr = |n: &str| (m.attr)(n);
    match m.class {
        // The padding modules pad as `F.pad(x, self.padding)` does.
        c if [
            "ZeroPad",
            "ConstantPad",
            "ReflectionPad",
            "ReplicationPad",
            "CircularPad",
        ]
        .iter()
        .any(|p| c.starts_with(p)) =>
        {
            call(
                "pad",
                &Inputs {
                    args: &[a0.clone(), attr("padding")],
                    kwargs: &[],
                },
            )
        }
        "Linear" | "LazyLinear" | "NonDynamicallyQuantizableLinear" => {
            match (&t.shape, attr("out_features").as_int()) {
                (Some(s), Some(o)) if !s.is_empty() => {
                    let mut s = s.clone();
                    *s.last_mut().unwrap() = Dim::Known(o);
                    tensor(Some(s), t.dtype)
                }
                _ => tensor(None, t.dtype),
            }
        }
        "Conv1d" | "Conv2d" | "Conv3d" => {
            let n = match m.class {
                "Conv1d" => 1,
                "Conv2d" => 2,
                _ => 3,
            };
            let out = spatial(
                t,
                n,
                attr("out_channels").as_int(),
                &attr("kernel_size"),
                &attr("stride"),
                &attr("padding"),
                &attr("dilation"),
                false,
            );
            unknown_channels(out, n, attr("out_channels").as_int())
        }
        "ConvTranspose1d" | "ConvTranspose2d" | "ConvTranspose3d" => {
            let n = match m.class {
                "ConvTranspose1d" => 1,
                "ConvTranspose2d" => 2,
                _ => 3,
            };
            let Some(shape) = &t.shape else {
                return tensor(None, t.dtype);
            };
            if shape.len() < n + 1 {
                return tensor(None, t.dtype);
            }
            let (k, s, p, d, op) = (
                tuple_n(&attr("kernel_size"), n),
                tuple_n(&attr("stride"), n),
                tuple_n(&attr("padding"), n),
                tuple_n(&attr("dilation"), n),
                tuple_n(&attr("output_padding"), n),
            );
            let mut out = shape.clone();
            let base = shape.len() - n;
            out[base - 1] = attr("out_channels")
                .as_int()
                .map(Dim::Known)
                .unwrap_or(Dim::Unknown);
            for i in 0..n {
                out[base + i] = match (shape[base + i].known(), &k, &s, &p, &d, &op) {
                    (Some(x), Some(k), Some(s), Some(p), Some(d), Some(op)) => {
                        Dim::Known((x - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1)
                    }
                    _ => Dim::Unknown,
                };
            }
            tensor(Some(out), t.dtype)
        }
        "MaxPool1d" | "MaxPool2d" | "MaxPool3d" | "AvgPool1d" | "AvgPool2d" | "AvgPool3d" => {
            let n = if m.class.ends_with("1d") {
                1
            } else if m.class.ends_with("2d") {
                2
            } else {
                3
            };
            let dil = if m.class.starts_with("Max") {
                attr("dilation")
            } else {
                Meta::int(1)
            };
            let ceil = matches!(attr("ceil_mode"), Meta::Scalar(Scalar::Bool(Some(true)), _));
            spatial(
                t,
                n,
                None,
                &attr("kernel_size"),
                &attr("stride"),
                &attr("padding"),
                &dil,
                ceil,
            )
        }
        // (N, C, H, W) → (N, C·kh·kw, L), L the number of sliding blocks (unbatched: no N).
        "Unfold" => {
            let Some(shape) = t.shape.as_ref().filter(|s| matches!(s.len(), 3 | 4)) else {
                return tensor(None, t.dtype);
            };
            let kernel = tuple_n(&attr("kernel_size"), 2);
            let blocks = spatial(
                t,
                2,
                None,
                &attr("kernel_size"),
                &attr("stride"),
                &attr("padding"),
                &attr("dilation"),
                false,
            );
            let channels = &shape[shape.len() - 3];
            let out_spatial = blocks.as_tensor().and_then(|b| b.shape.clone());
            let dims = match (channels.known(), kernel, out_spatial) {
                (Some(c), Some(k), Some(o)) => {
                    let l = o[o.len() - 2..]
                        .iter()
                        .map(Dim::known)
                        .product::<Option<i64>>();
                    let mut out: Vec<Dim> = shape[..shape.len() - 3].to_vec();
                    out.push(Dim::Known(c * k[0] * k[1]));
                    out.push(l.map(Dim::Known).unwrap_or(Dim::Unknown));
                    Some(out)
                }
                _ => None,
            };
            tensor(dims, t.dtype)
        }
        // (output, h_n) — (output, (h_n, c_n)) for an LSTM; output (N, L, D·H_out) with
        // batch_first, (L, N, D·H_out) otherwise or unbatched (L, D·H_out); h_n and c_n
        // (D·num_layers, N, H) with H = proj_size or hidden_size for h_n.
        // `(h, c)` for LSTMCell, `h` for the others: [batch, hidden], or [hidden] unbatched
        "LSTMCell" | "GRUCell" | "RNNCell" => {
            let shape = match (&t.shape, attr("hidden_size").as_int()) {
                (Some(s), Some(h)) if s.len() == 2 => Some(vec![s[0].clone(), Dim::Known(h)]),
                (Some(s), Some(h)) if s.len() == 1 => Some(vec![Dim::Known(h)]),
                _ => None,
            };
            let h = tensor(shape, t.dtype);
            if m.class == "LSTMCell" {
                Meta::Seq(vec![h.clone(), h])
            } else {
                h
            }
        }
        "LSTM" | "GRU" | "RNN" => {
            let hidden = attr("hidden_size").as_int();
            let proj = attr("proj_size").as_int().filter(|&p| p > 0);
            let layers = attr("num_layers").as_int().unwrap_or(1);
            let directions = if matches!(
                attr("bidirectional"),
                Meta::Scalar(Scalar::Bool(Some(true)), _)
            ) {
                2
            } else {
                1
            };
            let batch_first = matches!(
                attr("batch_first"),
                Meta::Scalar(Scalar::Bool(Some(true)), _)
            );
            let out_features = proj.or(hidden).map(|h| Dim::Known(directions * h));
            let (output, batch) = match (&t.shape, out_features) {
                (Some(s), Some(f)) if s.len() == 3 => {
                    let mut o = s.clone();
                    o[2] = f;
                    (Some(o), Some(s[if batch_first { 0 } else { 1 }].clone()))
                }
                (Some(s), Some(f)) if s.len() == 2 => (Some(vec![s[0].clone(), f]), None),
                _ => (None, None),
            };
            let state = |size: Option<i64>| {
                let mut dims = vec![Dim::Known(directions * layers)];
                dims.extend(batch.clone());
                dims.push(size.map(Dim::Known).unwrap_or(Dim::Unknown));
                tensor(output.as_ref().map(|_| dims), t.dtype)
            };
            let h = state(proj.or(hidden));
            let last = if m.class == "LSTM" {
                Meta::Seq(vec![h, state(hidden)])
            } else {
                h
            };
            Meta::Seq(vec![tensor(output, t.dtype), last])
        }
        "Fold" => folded(t, &attr("output_size"), &attr("kernel_size")),
        "Upsample" | "UpsamplingNearest2d" | "UpsamplingBilinear2d" => {
            resized(t, Some(&attr("size")), Some(&attr("scale_factor")))
        }
        "AdaptiveAvgPool1d" | "AdaptiveMaxPool1d" => adaptive(t, 1, &attr("output_size")),
        "AdaptiveAvgPool2d" | "AdaptiveMaxPool2d" => adaptive(t, 2, &attr("output_size")),
        "AdaptiveAvgPool3d" | "AdaptiveMaxPool3d" => adaptive(t, 3, &attr("output_size")),
        "PixelShuffle" => shuffled(t, attr("upscale_factor").as_int(), true),
        "PixelUnshuffle" => shuffled(t, attr("downscale_factor").as_int(), false),
        "Flatten" => flatten(
            t,
            attr("start_dim").as_int().unwrap_or(1),
            attr("end_dim").as_int().unwrap_or(-1),
        ),
        "Embedding" => match (&t.shape, attr("embedding_dim").as_int()) {
            (Some(s), Some(d)) => {
                let mut s = s.clone();
                s.push(Dim::Known(d));
                tensor(Some(s), DType::Float32)
            }
            _ => tensor(None, DType::Float32),
        },
        "MultiheadAttention" => {
            let need_weights = !matches!(
                inp.get(usize::MAX, "need_weights"),
                Some(Meta::Scalar(Scalar::Bool(Some(false)), _))
            );
            let out = tensor(t.shape.clone(), t.dtype);
            let weights = if need_weights {
                Meta::tensor(None, t.dtype)
            } else {
                Meta::None
            };
            Meta::Seq(vec![out, weights])
        }
        "Identity"
        | "ReLU"
        | "ReLU6"
        | "GELU"
        | "SiLU"
        | "Sigmoid"
        | "Tanh"
        | "Hardswish"
        | "Hardsigmoid"
        | "LeakyReLU"
        | "ELU"
        | "SELU"
        | "CELU"
        | "Mish"
        | "Softplus"
        | "PReLU"
        | "Hardtanh"
        | "Softmax"
        | "LogSoftmax"
        | "Softmax2d"
        | "Dropout"
        | "Dropout1d"
        | "Dropout2d"
        | "Dropout3d"
        | "AlphaDropout"
        | "BatchNorm1d"
        | "BatchNorm2d"
        | "BatchNorm3d"
        | "LayerNorm"
        | "GroupNorm"
        | "InstanceNorm1d"
        | "InstanceNorm2d"
        | "InstanceNorm3d"
        | "LocalResponseNorm"
        | "RMSNorm"
        | "SyncBatchNorm"
        | "Tanhshrink"
        | "Softsign"
        | "LogSigmoid"
        | "Hardshrink"
        | "Softshrink"
        | "Threshold"
        | "GLU"
        | "TransformerEncoderLayer"
        | "TransformerDecoderLayer"
        | "TransformerEncoder" => {
            if m.class == "GLU" {
                return tensor(None, t.dtype);
            }
            same(t)
        }
        _ => tensor(None, t.dtype),
    }
}

/// `torch.meshgrid(a, b, ..., indexing=...)` (or one list of tensors): one tensor per input,
/// each of shape `[len(a), len(b), ...]`, the first two swapped with `indexing="xy"`.
fn meshgrid(inp: &Inputs) -> Meta {
    let tensors: Vec<&Meta> = match inp.args {
        [Meta::Seq(items)] => items.iter().collect(),
        args => args.iter().collect(),
    };
    let mut dims = Vec::with_capacity(tensors.len());
    let mut dtype = DType::Float32;
    for m in &tensors {
        let Some(t) = m.as_tensor() else {
            return Meta::Unknown;
        };
        dtype = t.dtype;
        match t.shape.as_deref() {
            Some([d]) => dims.push(d.clone()),
            Some([]) => dims.push(Dim::Known(1)),
            _ => return Meta::Unknown,
        }
    }
    let xy = inp
        .kwargs
        .iter()
        .any(|(k, v)| k == "indexing" && matches!(v, Meta::Str(s) if s == "xy"));
    if xy && dims.len() >= 2 {
        dims.swap(0, 1);
    }
    Meta::Seq(
        tensors
            .iter()
            .map(|_| tensor(Some(dims.clone()), dtype))
            .collect(),
    )
}

/// `F.interpolate` / `nn.Upsample`: batch and channels kept, each spatial size either given
/// (`size`, an int or one per dim) or `floor(size · scale_factor)`.
fn resized(t: &TensorMeta, size: Option<&Meta>, scale: Option<&Meta>) -> Meta {
    let Some(shape) = t.shape.as_ref().filter(|s| s.len() >= 3) else {
        return tensor(None, t.dtype);
    };
    let n = shape.len() - 2;
    let mut out: Vec<Dim> = shape[..2].to_vec();
    let given = size.filter(|m| !matches!(m, Meta::None | Meta::Unknown));
    if let Some(size) = given {
        let dims = match size {
            Meta::Seq(_) | Meta::Size(_) => size.as_dims(),
            m => m.as_dims().map(|d| vec![d[0].clone(); n]),
        };
        match dims.filter(|d| d.len() == n) {
            Some(d) => out.extend(d),
            None => return tensor(None, t.dtype),
        }
        return tensor(Some(out), t.dtype);
    }
    let factors: Option<Vec<f64>> = match scale {
        Some(Meta::Seq(v)) => v.iter().map(Meta::as_f64).collect(),
        Some(m) => m.as_f64().map(|f| vec![f; n]),
        None => None,
    };
    match factors.filter(|f| f.len() == n) {
        Some(f) => {
            for (d, f) in shape[2..].iter().zip(f) {
                out.push(
                    d.known()
                        .map(|x| Dim::Known((x as f64 * f).floor() as i64))
                        .unwrap_or(Dim::Unknown),
                );
            }
            tensor(Some(out), t.dtype)
        }
        None => tensor(None, t.dtype),
    }
}

/// `math.ceil(H / stride)` and its kin on a Python number (a size read off a shape keeps its
/// origin): ints from the rounding functions, floats from the others.
fn math_on_scalar(name: &str, x: &Scalar, origin: ScalarOrigin) -> Option<Meta> {
    // The unary operators keep the operand's type as Python's do (a bool is an int to
    // them): `-x.shape[1]` slices as the int it is.
    let int = |v: Option<i64>, f: fn(i64) -> Option<i64>| {
        Meta::Scalar(Scalar::Int(v.and_then(f)), origin)
    };
    match (name, x) {
        ("neg", Scalar::Int(v)) => return Some(int(*v, i64::checked_neg)),
        ("pos", Scalar::Int(v)) => return Some(int(*v, Some)),
        ("abs", Scalar::Int(v)) => return Some(int(*v, i64::checked_abs)),
        ("invert", Scalar::Int(v)) => return Some(int(*v, |v| Some(!v))),
        ("neg" | "pos" | "abs" | "invert", Scalar::Bool(b)) => {
            let v = b.map(i64::from);
            let f: fn(i64) -> Option<i64> = match name {
                "neg" => i64::checked_neg,
                "invert" => |v| Some(!v),
                _ => Some,
            };
            return Some(int(v, f));
        }
        ("neg", Scalar::Float(v)) => {
            return Some(Meta::Scalar(Scalar::Float(v.map(|f| -f)), origin))
        }
        ("pos", Scalar::Float(v)) => return Some(Meta::Scalar(Scalar::Float(*v), origin)),
        ("abs", Scalar::Float(v)) => {
            return Some(Meta::Scalar(Scalar::Float(v.map(f64::abs)), origin))
        }
        _ => {}
    }
    let v = match x {
        Scalar::Int(v) => v.map(|v| v as f64),
        Scalar::Float(v) => *v,
        Scalar::Bool(v) => v.map(|b| b as i64 as f64),
    };
    let rounded = |f: fn(f64) -> f64| {
        Meta::Scalar(
            Scalar::Int(v.map(f).filter(|r| r.is_finite()).map(|r| r as i64)),
            origin,
        )
    };
    let float = |f: fn(f64) -> f64| Meta::Scalar(Scalar::Float(v.map(f)), origin);
    Some(match name {
        "ceil" => rounded(f64::ceil),
        "floor" => rounded(f64::floor),
        "trunc" => rounded(f64::trunc),
        "sqrt" => float(f64::sqrt),
        "exp" => float(f64::exp),
        "log" => float(f64::ln),
        "log2" => float(f64::log2),
        "log10" => float(f64::log10),
        _ => return None,
    })
}

/// `F.fold` / `nn.Fold`: (N, C·kh·kw, L) → (N, C, *output_size) (unbatched: no N).
fn folded(t: &TensorMeta, output_size: &Meta, kernel_size: &Meta) -> Meta {
    let Some(shape) = t.shape.as_ref().filter(|s| matches!(s.len(), 2 | 3)) else {
        return tensor(None, t.dtype);
    };
    let (Some(out), Some(k)) = (tuple_n(output_size, 2), tuple_n(kernel_size, 2)) else {
        return tensor(None, t.dtype);
    };
    let blocks = &shape[shape.len() - 2];
    let channels = match blocks.known() {
        Some(ck) if k[0] * k[1] > 0 && ck % (k[0] * k[1]) == 0 => Dim::Known(ck / (k[0] * k[1])),
        _ => Dim::Unknown,
    };
    let mut dims: Vec<Dim> = shape[..shape.len() - 2].to_vec();
    dims.push(channels);
    dims.extend(out.iter().map(|&d| Dim::Known(d)));
    tensor(Some(dims), t.dtype)
}

/// `torch.einsum(equation, *operands)` (or the operands as one list): each subscript letter
/// takes its size from the operands (size-1 dims broadcast), `...` the broadcast of the
/// dims the letters leave; the output is the letters after `->`, or without an arrow the
/// `...` dims then the letters used once, in alphabetical order. Unknown when the equation is
/// not a constant, an operand's rank is unknown, or the ranks do not match the subscripts.
fn einsum(inp: &Inputs) -> Meta {
    let Some(Meta::Str(eq)) = inp.args.first() else {
        return Meta::Unknown;
    };
    let ops: Vec<&Meta> = match inp.args.get(1..) {
        Some([Meta::Seq(items)]) => items.iter().collect(),
        Some(rest) => rest.iter().collect(),
        None => return Meta::Unknown,
    };
    let eq: String = eq.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (eq.as_str(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != ops.len() || ops.is_empty() {
        return Meta::Unknown;
    }
    let mut sizes: Vec<(char, Dim)> = vec![];
    let mut counts: std::collections::BTreeMap<char, usize> = Default::default();
    let mut ellipsis: Option<Shape> = None;
    let mut dtype: Option<DType> = None;
    for (term, op) in terms.iter().zip(&ops) {
        let Some(t) = op.as_tensor() else {
            return Meta::Unknown;
        };
        dtype = Some(match dtype {
            Some(d) => DType::promote(d, t.dtype),
            None => t.dtype,
        });
        let Some(shape) = &t.shape else {
            return Meta::Unknown;
        };
        let (before, after) = match term.split_once("...") {
            Some((b, a)) => (b, Some(a)),
            None => (*term, None),
        };
        let letters = before.chars().count() + after.map_or(0, |a| a.chars().count());
        if !before
            .chars()
            .chain(after.unwrap_or("").chars())
            .all(|c| c.is_ascii_alphabetic())
            || letters > shape.len()
            || (after.is_none() && letters != shape.len())
        {
            return Meta::Unknown;
        }
        let n_before = before.chars().count();
        let n_ell = shape.len() - letters;
        let mut dims: Vec<(char, &Dim)> = before.chars().zip(&shape[..n_before]).collect();
        if let Some(a) = after {
            dims.extend(a.chars().zip(&shape[n_before + n_ell..]));
            let ell: Shape = shape[n_before..n_before + n_ell].to_vec();
            ellipsis = match ellipsis {
                None => Some(ell),
                Some(prev) => match broadcast(&prev, &ell) {
                    Some(b) => Some(b),
                    None => return Meta::Unknown,
                },
            };
        }
        for (c, d) in dims {
            *counts.entry(c).or_default() += 1;
            match sizes.iter_mut().find(|(k, _)| *k == c) {
                None => sizes.push((c, d.clone())),
                Some((_, prev)) => {
                    if *prev == Dim::Known(1) {
                        *prev = d.clone();
                    } else if *d != Dim::Known(1) && *prev != *d {
                        if let (Some(_), Some(_)) = (prev.known(), d.known()) {
                            return Meta::Unknown;
                        }
                    }
                }
            }
        }
    }
    let size = |c: char| sizes.iter().find(|(k, _)| *k == c).map(|(_, d)| d.clone());
    let mut out: Shape = vec![];
    match rhs {
        Some(r) => {
            let (before, after) = match r.split_once("...") {
                Some((b, a)) => (b, Some(a)),
                None => (r, None),
            };
            for c in before.chars() {
                let Some(d) = size(c) else {
                    return Meta::Unknown;
                };
                out.push(d);
            }
            if let Some(a) = after {
                out.extend(ellipsis.clone().unwrap_or_default());
                for c in a.chars() {
                    let Some(d) = size(c) else {
                        return Meta::Unknown;
                    };
                    out.push(d);
                }
            }
        }
        None => {
            out.extend(ellipsis.unwrap_or_default());
            for (c, n) in &counts {
                if *n == 1 {
                    out.push(size(*c).unwrap_or(Dim::Unknown));
                }
            }
        }
    }
    Meta::tensor(Some(out), dtype.unwrap_or(DType::Float32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &[i64]) -> Meta {
        Meta::tensor(Some(shape_of(s)), DType::Float32)
    }

    fn run(name: &str, args: &[Meta], kwargs: &[(String, Meta)]) -> Meta {
        call(name, &Inputs { args, kwargs })
    }

    /// Checked against torch 2.15: `view_as_complex` of `(3, 4, 2)` float32 is `(3, 4)`
    /// complex64 and of float64 complex128; `view_as_real` adds the trailing 2 back; a last size
    /// other than 2, or a real tensor for `view_as_real`, raises; `polar` broadcasts.
    #[test]
    fn complex_views_and_polar() {
        let typed = |s: &[i64], d: DType| Meta::tensor(Some(shape_of(s)), d);
        assert_eq!(
            run("view_as_complex", &[t(&[3, 4, 2])], &[]),
            typed(&[3, 4], DType::Complex64)
        );
        assert_eq!(
            run("view_as_complex", &[typed(&[3, 2], DType::Float64)], &[]),
            typed(&[3], DType::Complex128)
        );
        // float16 pairs make complex32, which has no `DType`: not made up
        assert_eq!(
            run("view_as_complex", &[typed(&[3, 2], DType::Float16)], &[]),
            Meta::Unknown
        );
        let raises =
            |name: &str, args: &[Meta]| infer(name, &Inputs { args, kwargs: &[] }).is_err();
        assert!(raises("view_as_complex", &[t(&[3, 4])]));
        assert_eq!(
            run("view_as_real", &[typed(&[3, 4], DType::Complex64)], &[]),
            typed(&[3, 4, 2], DType::Float32)
        );
        assert!(raises("view_as_real", &[t(&[3, 4])]));
        assert_eq!(
            run("polar", &[t(&[3, 1]), t(&[4])], &[]),
            typed(&[3, 4], DType::Complex64)
        );
        // mixed dtypes raise
        assert!(raises("polar", &[t(&[3]), typed(&[3], DType::Float64)]));
        // complex64 with float64 promotes to complex128, with an int to complex64
        assert_eq!(
            run(
                "mul",
                &[typed(&[2], DType::Complex64), typed(&[2], DType::Float64)],
                &[]
            ),
            typed(&[2], DType::Complex128)
        );
        assert_eq!(
            run(
                "truediv",
                &[typed(&[2], DType::Complex64), Meta::int(2)],
                &[]
            ),
            typed(&[2], DType::Complex64)
        );
        assert_eq!(
            run("sum", &[typed(&[2], DType::Complex64)], &[]),
            typed(&[], DType::Complex64)
        );
    }

    /// torch 2.15: `pad_sequence([(3, 5), (7, 5)])` is `(7, 2, 5)`, `batch_first=True` gives
    /// `(2, 7, 5)`, in the first sequence's dtype; trailing sizes that differ raise.
    #[test]
    fn pad_sequence_pads_to_the_longest() {
        let seqs = |a: Meta, b: Meta| Meta::Seq(vec![a, b]);
        assert_eq!(
            run("pad_sequence", &[seqs(t(&[3, 5]), t(&[7, 5]))], &[]),
            t(&[7, 2, 5])
        );
        assert_eq!(
            run(
                "pad_sequence",
                &[seqs(t(&[3, 5]), t(&[7, 5]))],
                &[(
                    "batch_first".into(),
                    Meta::Scalar(Scalar::Bool(Some(true)), ScalarOrigin::Const)
                )]
            ),
            t(&[2, 7, 5])
        );
        let long = Meta::tensor(Some(shape_of(&[3, 5])), DType::Int64);
        assert_eq!(
            run("pad_sequence", &[seqs(long.clone(), t(&[7, 5]))], &[]),
            Meta::tensor(Some(shape_of(&[7, 2, 5])), DType::Int64)
        );
        assert_eq!(
            run("pad_sequence", &[seqs(t(&[3, 5]), t(&[7, 4]))], &[]),
            Meta::tensor(None, DType::Float32)
        );
    }

    #[test]
    fn outer_product_of_two_vectors() {
        let run = |a: Meta, b: Meta| {
            call(
                "outer",
                &Inputs {
                    args: &[a, b],
                    kwargs: &[],
                },
            )
        };
        assert_eq!(run(t(&[3]), t(&[5])), t(&[3, 5]));
        // a matrix is no vector: torch raises, the shape is not made up
        assert_eq!(run(t(&[3, 2]), t(&[5])), Meta::Unknown);
        let unknown_rank = Meta::tensor(None, DType::Float32);
        assert_eq!(run(unknown_rank.clone(), t(&[5])), unknown_rank);
    }

    /// `F.multi_head_attention_forward` as torch 2.15 gives it (open_clip's ModifiedResNet
    /// pools with it): the output is the query's shape with the output projection's rows last,
    /// batched `(5, 3, 8)` query and `(6, 8)` projection giving `(5, 3, 6)`, unbatched `(5, 8)`
    /// giving `(5, 6)`; the weights None with `need_weights=False`, a tensor otherwise.
    #[test]
    fn multi_head_attention_forward_output() {
        let run = |q: Meta, kwargs: &[(String, Meta)]| {
            let k = q.clone();
            let args = [
                q,
                k.clone(),
                k,
                Meta::int(8),
                Meta::int(2),
                t(&[24, 8]),
                t(&[24]),
                Meta::None,
                Meta::None,
                Meta::Scalar(Scalar::Bool(Some(false)), ScalarOrigin::Const),
                Meta::Scalar(Scalar::Float(Some(0.0)), ScalarOrigin::Const),
                t(&[6, 8]),
                t(&[6]),
            ];
            call(
                "multi_head_attention_forward",
                &Inputs {
                    args: &args,
                    kwargs,
                },
            )
        };
        let no_weights = [(
            "need_weights".to_string(),
            Meta::Scalar(Scalar::Bool(Some(false)), ScalarOrigin::Const),
        )];
        assert_eq!(
            run(t(&[5, 3, 8]), &no_weights),
            Meta::Seq(vec![t(&[5, 3, 6]), Meta::None])
        );
        assert_eq!(
            run(t(&[5, 8]), &no_weights),
            Meta::Seq(vec![t(&[5, 6]), Meta::None])
        );
        // weights by default, of a shape not worked out: a tensor, never a made-up shape
        assert_eq!(
            run(t(&[5, 3, 8]), &[]),
            Meta::Seq(vec![t(&[5, 3, 6]), Meta::tensor(None, DType::Float32)])
        );
    }

    /// `x.unflatten(dim, sizes)` as torch 2.15 gives it (`torch.zeros(s).unflatten(d, sizes)
    /// .shape`): diffusers' attention processors split heads with `q.unflatten(-1, (heads, -1))`.
    /// A -1 over a symbolic size is symbolic only where the others divide it exactly.
    #[test]
    fn unflatten_splits_one_dimension() {
        let run = |x: Meta, dim: i64, sizes: Vec<Meta>| {
            call(
                "unflatten",
                &Inputs {
                    args: &[x, Meta::int(dim), Meta::Seq(sizes)],
                    kwargs: &[],
                },
            )
        };
        let ints = |v: &[i64]| v.iter().map(|&i| Meta::int(i)).collect::<Vec<_>>();
        assert_eq!(
            run(t(&[1, 16, 96]), -1, ints(&[-1, 16])),
            t(&[1, 16, 6, 16])
        );
        assert_eq!(run(t(&[1, 144]), 1, ints(&[6, -1])), t(&[1, 6, 24]));
        assert_eq!(run(t(&[6, 5]), 0, ints(&[2, 3])), t(&[2, 3, 5]));
        // sizes that do not multiply up raise in torch: no shape is made up
        assert_eq!(
            run(t(&[1, 10]), 1, ints(&[3, -1])),
            Meta::tensor(None, DType::Float32)
        );
        let s0 = Dim::Sym(crate::shapes::Expr::sym(0));
        let sym = |d: Vec<Dim>| Meta::tensor(Some(d), DType::Float32);
        let s0x8 = Dim::Sym(crate::shapes::Expr::sym(0).scale(8));
        assert_eq!(
            run(sym(vec![Dim::Known(2), s0x8.clone()]), 1, ints(&[-1, 8])),
            sym(vec![Dim::Known(2), s0.clone(), Dim::Known(8)])
        );
        // s0 // 8 is no size unless 8 divides s0, which is not known
        assert_eq!(
            run(sym(vec![Dim::Known(2), s0]), 1, ints(&[-1, 8])),
            sym(vec![Dim::Known(2), Dim::Unknown, Dim::Known(8)])
        );
    }

    /// A tuple of chunks sliced (`x.chunk(6, dim=-1)[:3]`, diffusers' Flux2 modulation) is the
    /// tuple of the chunks the slice picks, with Python's bounds: a negative start counts from
    /// the end, a stop past the end stops there, a negative step walks back.
    #[test]
    fn sliced_tuple_of_chunks() {
        let parts: Vec<Meta> = (1..=6).map(|i| t(&[i])).collect();
        let sl = |a: Meta, b: Meta, c: Meta| Meta::Slice(Box::new([a, b, c]));
        let pick = |s: Meta| getitem(&Meta::Seq(parts.clone()), &s);
        let of = |idx: &[usize]| Meta::Seq(idx.iter().map(|&i| parts[i].clone()).collect());
        let i = Meta::int;
        assert_eq!(pick(sl(i(0), i(3), Meta::None)), of(&[0, 1, 2]));
        assert_eq!(pick(sl(i(3), Meta::None, Meta::None)), of(&[3, 4, 5]));
        assert_eq!(pick(sl(i(-2), i(100), Meta::None)), of(&[4, 5]));
        assert_eq!(pick(sl(Meta::None, Meta::None, i(-2))), of(&[5, 3, 1]));
        assert_eq!(pick(sl(i(4), i(1), Meta::None)), of(&[]));
        assert_eq!(pick(sl(Meta::None, Meta::None, i(0))), Meta::Unknown);
        let unknown_stop = Meta::Scalar(Scalar::Int(None), ScalarOrigin::Shape);
        assert_eq!(pick(sl(i(0), unknown_stop, Meta::None)), Meta::Unknown);
    }

    /// `-x.shape[1]` is the int it is (HunyuanVideo slices `out[:, -n:]` with it); Python's
    /// unary operators on ints and bools give ints, on floats floats.
    #[test]
    fn unary_operators_on_shape_scalars() {
        let run = |name: &str, x: Meta| {
            call(
                name,
                &Inputs {
                    args: &[x],
                    kwargs: &[],
                },
            )
        };
        let shape_int = |v: Option<i64>| Meta::Scalar(Scalar::Int(v), ScalarOrigin::Shape);
        assert_eq!(run("neg", shape_int(Some(12))), shape_int(Some(-12)));
        assert_eq!(run("neg", shape_int(None)), shape_int(None));
        assert_eq!(run("abs", shape_int(Some(-3))), shape_int(Some(3)));
        assert_eq!(run("invert", shape_int(Some(5))), shape_int(Some(-6)));
        let b = Meta::Scalar(Scalar::Bool(Some(true)), ScalarOrigin::Const);
        assert_eq!(
            run("neg", b.clone()),
            Meta::Scalar(Scalar::Int(Some(-1)), ScalarOrigin::Const)
        );
        assert_eq!(
            run("invert", b),
            Meta::Scalar(Scalar::Int(Some(-2)), ScalarOrigin::Const)
        );
        let f = |v: f64| Meta::Scalar(Scalar::Float(Some(v)), ScalarOrigin::Const);
        assert_eq!(run("neg", f(1.5)), f(-1.5));
    }

    /// Shapes from torch 2.15: `torch.linspace(0.0, 1.0, 8).shape` is `[8]` float32 (also for
    /// int bounds), `F.avg_pool3d(torch.zeros(1, 24, 2, 8, 8), 2, stride=2).shape` is
    /// `[1, 24, 1, 4, 4]`; `max_pool3d(..., return_indices=True)` is a tuple, not one tensor.
    #[test]
    fn linspace_and_pool3d() {
        let run = |name: &str, args: Vec<Meta>, kwargs: Vec<(&str, Meta)>| {
            let kwargs: Vec<(String, Meta)> = kwargs
                .into_iter()
                .map(|(k, m)| (k.to_string(), m))
                .collect();
            call(
                name,
                &Inputs {
                    args: &args,
                    kwargs: &kwargs,
                },
            )
        };
        let f = |v: f64| Meta::Scalar(Scalar::Float(Some(v)), ScalarOrigin::Const);
        let i = Meta::int;
        assert_eq!(run("linspace", vec![f(0.0), f(1.0), i(8)], vec![]), t(&[8]));
        assert_eq!(
            run("linspace", vec![i(0), i(4)], vec![("steps", i(5))]),
            t(&[5])
        );
        assert_eq!(
            run(
                "linspace",
                vec![i(0), i(4), i(5)],
                vec![("dtype", Meta::Dtype(DType::Float64))]
            ),
            Meta::tensor(Some(shape_of(&[5])), DType::Float64)
        );
        let x = t(&[1, 24, 2, 8, 8]);
        assert_eq!(
            run("avg_pool3d", vec![x.clone(), i(2)], vec![("stride", i(2))]),
            t(&[1, 24, 1, 4, 4])
        );
        assert_eq!(
            run(
                "max_pool3d",
                vec![x.clone(), Meta::Seq(vec![i(1), i(2), i(2)])],
                vec![]
            ),
            t(&[1, 24, 2, 4, 4])
        );
        let pair = run(
            "max_pool3d",
            vec![x, i(2)],
            vec![(
                "return_indices",
                Meta::Scalar(Scalar::Bool(Some(true)), ScalarOrigin::Const),
            )],
        );
        assert_eq!(pair, Meta::Unknown);
    }

    /// `torch.arange` with its bounds bound by keyword (`arange(start=0, end=half)`, as
    /// diffusers' timestep embedding calls it) has the length of the positional form; the
    /// `arange(end, step=...)` torch does not accept is not given one.
    #[test]
    fn arange_bounds_by_keyword() {
        let len = |args: Vec<Meta>, kwargs: Vec<(&str, Meta)>| {
            let kwargs: Vec<(String, Meta)> = kwargs
                .into_iter()
                .map(|(k, m)| (k.to_string(), m))
                .collect();
            match call(
                "arange",
                &Inputs {
                    args: &args,
                    kwargs: &kwargs,
                },
            ) {
                Meta::Tensor(t) => t.shape.unwrap()[0].known(),
                m => panic!("{m:?}"),
            }
        };
        let i = Meta::int;
        assert_eq!(len(vec![i(5)], vec![]), Some(5));
        assert_eq!(
            len(vec![], vec![("start", i(0)), ("end", i(128))]),
            Some(128)
        );
        assert_eq!(len(vec![], vec![("end", i(7))]), Some(7));
        assert_eq!(len(vec![i(2)], vec![("end", i(7))]), Some(5));
        assert_eq!(len(vec![i(1), i(10)], vec![("step", i(3))]), Some(3));
        assert_eq!(
            len(
                vec![],
                vec![("start", i(10)), ("end", i(0)), ("step", i(-4))]
            ),
            Some(3)
        );
        assert_eq!(len(vec![i(10)], vec![("step", i(2))]), None);
    }

    /// `x.split((a, b), 1)` gives two parts however little is known of `x`: list(...) and
    /// loops over them need the count (d_fine's CSP layer splits a conv output of unknown
    /// rank); each part has its section's size where the shape is known.
    #[test]
    fn split_into_sections_has_one_part_per_section() {
        let run = |x: Meta, sizes: &[i64]| {
            let args = [
                x,
                Meta::Seq(sizes.iter().map(|&s| Meta::int(s)).collect()),
                Meta::int(1),
            ];
            call(
                "split",
                &Inputs {
                    args: &args,
                    kwargs: &[],
                },
            )
        };
        let unknown_rank = Meta::tensor(None, DType::Float32);
        assert_eq!(
            run(unknown_rank.clone(), &[4, 4]),
            Meta::Seq(vec![unknown_rank.clone(), unknown_rank])
        );
        let symbolic = Meta::tensor(
            Some(vec![Dim::Known(2), Dim::Unknown, Dim::Known(5)]),
            DType::Float32,
        );
        let part = |n| {
            Meta::tensor(
                Some(vec![Dim::Known(2), Dim::Known(n), Dim::Known(5)]),
                DType::Float32,
            )
        };
        assert_eq!(
            run(symbolic, &[3, 1, 4]),
            Meta::Seq(vec![part(3), part(1), part(4)])
        );
        // a known dimension still goes through the sizes torch checks
        assert_eq!(
            run(t(&[2, 8, 5]), &[3, 5]),
            Meta::Seq(vec![part(3), part(5)])
        );
    }

    /// A -1 size is never a size: `expand` keeps the dimension it stands over, which on a
    /// tensor of unknown rank is unknown; a `view` with two -1s raises, so neither is known.
    #[test]
    fn minus_one_sizes_do_not_leak_into_shapes() {
        let show = |op: &str, args: Vec<Meta>| {
            format!(
                "{:?}",
                call(
                    op,
                    &Inputs {
                        args: &args,
                        kwargs: &[]
                    }
                )
            )
        };
        let unknown_rank = Meta::tensor(None, DType::Float32);
        let expected = Meta::tensor(
            Some(vec![
                Dim::Known(3),
                Dim::Unknown,
                Dim::Unknown,
                Dim::Known(8),
            ]),
            DType::Float32,
        );
        assert_eq!(
            show(
                "expand",
                vec![
                    unknown_rank,
                    Meta::int(3),
                    Meta::int(-1),
                    Meta::int(-1),
                    Meta::int(8)
                ]
            ),
            format!("{expected:?}")
        );
        // over a known shape -1 keeps the size (torch: zeros(1, 5, 8).expand(3, -1, -1))
        assert_eq!(
            show(
                "expand",
                vec![t(&[1, 5, 8]), Meta::int(3), Meta::int(-1), Meta::int(-1)]
            ),
            format!("{:?}", t(&[3, 5, 8]))
        );
        let two = show("view", vec![t(&[4, 6]), Meta::int(-1), Meta::int(-1)]);
        assert!(!two.contains("Known(-1)"), "{two}");
    }

    /// Expected shapes from torch 2.15: `torch.einsum(eq, *(torch.zeros(s) for s in shapes)).shape`.
    #[test]
    fn einsum_gather_index_select_shapes() {
        let e = |eq: &str, ops: &[&[i64]]| {
            let mut args = vec![Meta::Str(eq.into())];
            args.extend(ops.iter().map(|s| t(s)));
            format!(
                "{:?}",
                call(
                    "einsum",
                    &Inputs {
                        args: &args,
                        kwargs: &[]
                    }
                )
            )
        };
        let show = |s: &[i64]| format!("{:?}", t(s));
        assert_eq!(e("i , j -> i j", &[&[64], &[2]]), show(&[64, 2]));
        assert_eq!(
            e("bhqd,bhkd->bhqk", &[&[2, 4, 8, 16], &[2, 4, 9, 16]]),
            show(&[2, 4, 8, 9])
        );
        assert_eq!(e("ij,jk", &[&[3, 4], &[4, 5]]), show(&[3, 5]));
        assert_eq!(e("ba", &[&[3, 4]]), show(&[4, 3]));
        assert_eq!(
            e("...ij,...jk->...ik", &[&[2, 1, 3, 4], &[5, 4, 6]]),
            show(&[2, 5, 3, 6])
        );
        assert_eq!(e("ii->i", &[&[3, 3]]), show(&[3]));
        assert_eq!(
            e("bij,bjk->bik", &[&[1, 3, 4], &[7, 4, 5]]),
            show(&[7, 3, 5])
        );
        let g = [
            t(&[1, 64, 4]),
            Meta::int(1),
            Meta::tensor(Some(shape_of(&[1, 8, 4])), DType::Int64),
        ];
        assert_eq!(
            format!(
                "{:?}",
                call(
                    "gather",
                    &Inputs {
                        args: &g,
                        kwargs: &[]
                    }
                )
            ),
            show(&[1, 8, 4])
        );
        let i = [
            t(&[5, 6]),
            Meta::int(-1),
            Meta::tensor(Some(shape_of(&[3])), DType::Int64),
        ];
        assert_eq!(
            format!(
                "{:?}",
                call(
                    "index_select",
                    &Inputs {
                        args: &i,
                        kwargs: &[]
                    }
                )
            ),
            show(&[5, 3])
        );
        let kw = vec![
            ("query".to_string(), t(&[2, 4, 8, 16])),
            ("key".to_string(), t(&[2, 4, 9, 16])),
            ("value".to_string(), t(&[2, 4, 9, 32])),
        ];
        let out = call(
            "scaled_dot_product_attention",
            &Inputs {
                args: &[],
                kwargs: &kw,
            },
        );
        assert_eq!(format!("{out:?}"), show(&[2, 4, 8, 32]));
        // The batch dims broadcast (torch: learned queries of batch 1 against keys of batch 2
        // give batch 2); with enable_gqa the heads are the query's.
        let sdpa = |args: Vec<Meta>, kwargs: Vec<(String, Meta)>| {
            format!(
                "{:?}",
                call(
                    "scaled_dot_product_attention",
                    &Inputs {
                        args: &args,
                        kwargs: &kwargs,
                    },
                )
            )
        };
        let qkv = |q: &[i64], k: &[i64], v: &[i64]| vec![t(q), t(k), t(v)];
        assert_eq!(
            sdpa(qkv(&[1, 4, 8, 16], &[2, 4, 9, 16], &[2, 4, 9, 32]), vec![]),
            show(&[2, 4, 8, 32])
        );
        let gqa = vec![(
            "enable_gqa".to_string(),
            Meta::Scalar(Scalar::Bool(Some(true)), ScalarOrigin::Const),
        )];
        assert_eq!(
            sdpa(qkv(&[2, 4, 8, 16], &[2, 2, 9, 16], &[2, 2, 9, 32]), gqa),
            show(&[2, 4, 8, 32])
        );
        // Without it those heads do not broadcast: torch raises, no shape.
        assert_eq!(
            sdpa(qkv(&[2, 4, 8, 16], &[2, 2, 9, 16], &[2, 2, 9, 32]), vec![]),
            "Tensor(TensorMeta { shape: None, dtype: Float32 })"
        );
        // The rank does not match the subscripts: einsum raises, so a tensor of unknown
        // shape, not a guess.
        assert_eq!(
            e("ij->i", &[&[3, 4, 5]]),
            "Tensor(TensorMeta { shape: None, dtype: Float32 })"
        );
        let lst = vec![Meta::Str("i,i->".into()), Meta::Seq(vec![t(&[3]), t(&[3])])];
        assert_eq!(
            format!(
                "{:?}",
                call(
                    "einsum",
                    &Inputs {
                        args: &lst,
                        kwargs: &[]
                    }
                )
            ),
            show(&[])
        );
    }

    #[test]
    fn advanced_indices_stay_in_place_when_adjacent() {
        let idx = Meta::tensor(Some(shape_of(&[196, 196])), DType::Int64);
        let all = Meta::Slice(Box::new([Meta::None, Meta::None, Meta::None]));
        // torch: torch.zeros(4, 196)[:, torch.zeros(196, 196, dtype=torch.long)].shape == [4, 196, 196]
        let out = index(
            match &t(&[4, 196]) {
                Meta::Tensor(x) => x,
                _ => unreachable!(),
            },
            &Meta::Seq(vec![all.clone(), idx.clone()]),
        );
        assert_eq!(format!("{out:?}"), format!("{:?}", t(&[4, 196, 196])));
        // torch.zeros(5, 6, 7)[torch.zeros(2, dtype=torch.long), :, torch.zeros(2, dtype=torch.long)].shape == [2, 6]
        let i2 = Meta::tensor(Some(shape_of(&[2])), DType::Int64);
        let out = index(
            match &t(&[5, 6, 7]) {
                Meta::Tensor(x) => x,
                _ => unreachable!(),
            },
            &Meta::Seq(vec![i2.clone(), all, i2]),
        );
        assert_eq!(format!("{out:?}"), format!("{:?}", t(&[2, 6])));
    }

    #[test]
    fn routing_ops_of_mixture_of_experts() {
        let i64_t = |s: &[i64]| Meta::tensor(Some(shape_of(s)), DType::Int64);
        let i32_t = |s: &[i64]| Meta::tensor(Some(shape_of(s)), DType::Int32);
        let run = |name: &str, args: &[Meta], kwargs: &[(String, Meta)]| {
            format!("{:?}", call(name, &Inputs { args, kwargs }))
        };
        let kw = |k: &str, v: Meta| vec![(k.to_string(), v)];
        // torch: torch.topk(torch.zeros(16, 4), 2, dim=-1): values [16, 2] float, indices int64
        assert_eq!(
            run(
                "topk",
                &[t(&[16, 4]), Meta::int(2)],
                &kw("dim", Meta::int(-1))
            ),
            format!("{:?}", Meta::Seq(vec![t(&[16, 2]), i64_t(&[16, 2])]))
        );
        // torch.sort(torch.zeros(32, dtype=torch.long)): both [32] int64
        assert_eq!(
            run("sort", &[i64_t(&[32])], &[]),
            format!("{:?}", Meta::Seq(vec![i64_t(&[32]), i64_t(&[32])]))
        );
        // torch.histc(torch.zeros(5), bins=4).shape == [4]; without bins, 100
        assert_eq!(
            run("histc", &[t(&[5])], &kw("bins", Meta::int(4))),
            format!("{:?}", t(&[4]))
        );
        assert_eq!(run("histc", &[t(&[5])], &[]), format!("{:?}", t(&[100])));
        // torch._grouped_mm: [8, 8] x [4, 8, 8] (offs [4]) is [8, 8]; [4, 4, 8] x [4, 8, 8]
        // is [4, 4, 8]; [4, 8] x [8, 4] with offs [4] is [4, 4, 4]
        let offs = kw("offs", i32_t(&[4]));
        assert_eq!(
            run("_grouped_mm", &[t(&[8, 8]), t(&[4, 8, 8])], &offs),
            format!("{:?}", t(&[8, 8]))
        );
        assert_eq!(
            run("grouped_mm", &[t(&[4, 4, 8]), t(&[4, 8, 8])], &[]),
            format!("{:?}", t(&[4, 4, 8]))
        );
        assert_eq!(
            run("_grouped_mm", &[t(&[4, 8]), t(&[8, 4])], &offs),
            format!("{:?}", t(&[4, 4, 4]))
        );
        // torch.zeros(2, 3).new_ones((), dtype=torch.bool): [] bool; new_zeros(2, 3): [2, 3]
        assert_eq!(
            run(
                "new_ones",
                &[t(&[2, 3]), Meta::Seq(vec![])],
                &kw("dtype", Meta::Dtype(DType::Bool))
            ),
            format!("{:?}", Meta::tensor(Some(vec![]), DType::Bool))
        );
        assert_eq!(
            run("new_zeros", &[t(&[8]), Meta::int(2), Meta::int(3)], &[]),
            format!("{:?}", t(&[2, 3]))
        );
    }

    #[test]
    fn pad_grows_dimensions_from_the_last_one() {
        let ints = |v: &[i64]| Meta::Seq(v.iter().map(|&i| Meta::int(i)).collect());
        // torch: F.pad(torch.zeros(1, 16, 112, 112), (0, 1, 0, 1)).shape == [1, 16, 113, 113]
        let out = call(
            "pad",
            &Inputs {
                args: &[t(&[1, 16, 112, 112]), ints(&[0, 1, 0, 1])],
                kwargs: &[],
            },
        );
        assert_eq!(format!("{out:?}"), format!("{:?}", t(&[1, 16, 113, 113])));
        // F.pad(torch.zeros(1, 8, 3137, 18), (0, 0, 1, 0, 0, 0)).shape == [1, 8, 3138, 18]
        let out = call(
            "pad",
            &Inputs {
                args: &[t(&[1, 8, 3137, 18]), ints(&[0, 0, 1, 0, 0, 0])],
                kwargs: &[],
            },
        );
        assert_eq!(format!("{out:?}"), format!("{:?}", t(&[1, 8, 3138, 18])));
    }

    #[test]
    fn conv_and_pool_windows_match_torch() {
        assert_eq!(window(224, 7, 2, 3, 1, false), Some(112));
        assert_eq!(window(112, 3, 2, 1, 1, false), Some(56));
        // SqueezeNet's ceil_mode pools: 109 → 54 with kernel 3 stride 2.
        assert_eq!(window(109, 3, 2, 0, 1, true), Some(54));
        assert_eq!(window(13, 3, 2, 0, 1, true), Some(6));
    }

    #[test]
    fn view_infers_minus_one_and_matmul_broadcasts() {
        let inp = [t(&[2, 3, 4]), Meta::int(2), Meta::int(-1)];
        let out = call(
            "view",
            &Inputs {
                args: &inp,
                kwargs: &[],
            },
        );
        assert_eq!(out, t(&[2, 12]));
        let mm = [t(&[2, 1, 5, 4]), t(&[3, 4, 6])];
        assert_eq!(
            call(
                "matmul",
                &Inputs {
                    args: &mm,
                    kwargs: &[]
                }
            ),
            t(&[2, 3, 5, 6])
        );
        // GPT-2's Conv1D: `torch.addmm(bias, x.view(-1, nx), weight)`.
        let addmm = [t(&[96]), t(&[16, 32]), t(&[32, 96])];
        assert_eq!(
            call(
                "addmm",
                &Inputs {
                    args: &addmm,
                    kwargs: &[]
                }
            ),
            t(&[16, 96])
        );
    }

    #[test]
    fn indexing_with_slices_none_and_ints() {
        let idx = Meta::Seq(vec![
            Meta::Slice(Box::new([Meta::None, Meta::None, Meta::None])),
            Meta::int(0),
        ]);
        assert_eq!(getitem(&t(&[4, 5, 6]), &idx), t(&[4, 6]));
        let idx = Meta::Seq(vec![
            Meta::Ellipsis,
            Meta::Slice(Box::new([Meta::None, Meta::int(2), Meta::None])),
            Meta::None,
        ]);
        assert_eq!(getitem(&t(&[4, 5, 6]), &idx), t(&[4, 5, 2, 1]));
    }

    #[test]
    fn shape_scalars_keep_their_origin() {
        let size = call(
            "size",
            &Inputs {
                args: &[t(&[8, 16]), Meta::int(-1)],
                kwargs: &[],
            },
        );
        assert_eq!(
            size,
            Meta::Scalar(Scalar::Int(Some(16)), ScalarOrigin::Shape)
        );
        let item = call(
            "item",
            &Inputs {
                args: &[t(&[])],
                kwargs: &[],
            },
        );
        assert_eq!(item.origin(), Some(ScalarOrigin::Data));
        let cmp = binary("gt", &size, &Meta::int(2));
        assert_eq!(
            cmp,
            Meta::Scalar(Scalar::Bool(Some(true)), ScalarOrigin::Shape)
        );
    }
}
