//! PyTorch-style parameter initialisation from a seed.
//!
//! The bounds and standard deviations follow `torch.nn.init` exactly, so a
//! freshly built `nn.Linear` or `nn.Conv2d` here has weights from the same
//! distributions as in PyTorch. The random streams themselves differ: this
//! module uses its own small generator ([`Rng`], SplitMix64) so that results
//! are reproducible from a seed on every platform without extra crates.

use ndarray::IxDyn;

use super::{KernelError, Result, Tensor};

/// SplitMix64: a 64-bit state advanced by a Weyl sequence and scrambled by
/// a mixing function. Tiny, seedable from any `u64` (including 0) and good
/// enough statistically for initialising weights; not for cryptography.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
    spare_normal: Option<f64>,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng {
            state: seed,
            spare_normal: None,
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[low, high)`.
    pub fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.next_f64()
    }

    /// Standard normal by the Box–Muller transform; the second value of
    /// each pair is kept for the next call.
    pub fn standard_normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        // 1 - u is in (0, 1], so the logarithm is finite.
        let u1 = 1.0 - self.next_f64();
        let u2 = self.next_f64();
        let r = (-2.0 * u1.ln()).sqrt();
        let (s, c) = (std::f64::consts::TAU * u2).sin_cos();
        self.spare_normal = Some(r * s);
        r * c
    }
}

/// `torch.empty(shape).uniform_(low, high)`.
pub fn uniform(shape: &[usize], low: f32, high: f32, rng: &mut Rng) -> Tensor {
    let (lo, hi) = (low as f64, high as f64);
    Tensor::from_shape_simple_fn(IxDyn(shape), || {
        // Rounding to f32 can land exactly on `high`; keep the interval open.
        let v = rng.uniform(lo, hi) as f32;
        if v >= high && high > low {
            low
        } else {
            v
        }
    })
}

/// `torch.empty(shape).normal_(mean, std)`.
pub fn normal(shape: &[usize], mean: f32, std: f32, rng: &mut Rng) -> Tensor {
    Tensor::from_shape_simple_fn(IxDyn(shape), || {
        (mean as f64 + std as f64 * rng.standard_normal()) as f32
    })
}

/// `torch.nn.init._calculate_fan_in_and_fan_out`: for a weight of shape
/// `(out, in, *kernel)`, `fan_in = in · prod(kernel)` and
/// `fan_out = out · prod(kernel)`.
pub fn fan_in_and_fan_out(shape: &[usize]) -> Result<(usize, usize)> {
    if shape.len() < 2 {
        return Err(KernelError::invalid(
            "init",
            shape,
            "fan in and fan out can not be computed for a tensor with fewer than 2 dimensions",
        ));
    }
    let receptive: usize = shape[2..].iter().product();
    Ok((shape[1] * receptive, shape[0] * receptive))
}

/// The `nonlinearity` argument of `torch.nn.init.calculate_gain`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Nonlinearity {
    Linear,
    Conv,
    Sigmoid,
    Tanh,
    Relu,
    /// Carries the negative slope (`param`); PyTorch's default is 0.01.
    LeakyRelu(f64),
    Selu,
}

/// `torch.nn.init.calculate_gain`.
pub fn calculate_gain(nl: Nonlinearity) -> f64 {
    match nl {
        Nonlinearity::Linear | Nonlinearity::Conv | Nonlinearity::Sigmoid => 1.0,
        Nonlinearity::Tanh => 5.0 / 3.0,
        Nonlinearity::Relu => 2f64.sqrt(),
        Nonlinearity::LeakyRelu(slope) => (2.0 / (1.0 + slope * slope)).sqrt(),
        Nonlinearity::Selu => 0.75,
    }
}

/// Which fan `kaiming_*` scales by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FanMode {
    #[default]
    FanIn,
    FanOut,
}

fn fan(shape: &[usize], mode: FanMode) -> Result<usize> {
    let (fi, fo) = fan_in_and_fan_out(shape)?;
    Ok(match mode {
        FanMode::FanIn => fi,
        FanMode::FanOut => fo,
    })
}

/// Bound of `torch.nn.init.kaiming_uniform_`: `gain · sqrt(3 / fan)`.
/// PyTorch's `a` argument is the slope inside `Nonlinearity::LeakyRelu`.
pub fn kaiming_uniform_bound(shape: &[usize], mode: FanMode, nl: Nonlinearity) -> Result<f64> {
    let f = fan(shape, mode)?;
    Ok(calculate_gain(nl) * (3.0 / f as f64).sqrt())
}

/// `torch.nn.init.kaiming_uniform_(w, a, mode, nonlinearity)`.
pub fn kaiming_uniform(
    shape: &[usize],
    mode: FanMode,
    nl: Nonlinearity,
    rng: &mut Rng,
) -> Result<Tensor> {
    if shape.contains(&0) {
        // PyTorch leaves zero-element tensors alone rather than dividing by 0.
        return Ok(Tensor::zeros(IxDyn(shape)));
    }
    let b = kaiming_uniform_bound(shape, mode, nl)? as f32;
    Ok(uniform(shape, -b, b, rng))
}

/// `torch.nn.init.kaiming_normal_(w, a, mode, nonlinearity)`.
pub fn kaiming_normal(
    shape: &[usize],
    mode: FanMode,
    nl: Nonlinearity,
    rng: &mut Rng,
) -> Result<Tensor> {
    if shape.contains(&0) {
        return Ok(Tensor::zeros(IxDyn(shape)));
    }
    let std = calculate_gain(nl) / (fan(shape, mode)? as f64).sqrt();
    Ok(normal(shape, 0.0, std as f32, rng))
}

/// `torch.nn.init.xavier_uniform_(w, gain)`.
pub fn xavier_uniform(shape: &[usize], gain: f64, rng: &mut Rng) -> Result<Tensor> {
    let (fi, fo) = fan_in_and_fan_out(shape)?;
    let b = gain * (6.0 / (fi + fo) as f64).sqrt();
    Ok(uniform(shape, -b as f32, b as f32, rng))
}

/// `torch.nn.init.xavier_normal_(w, gain)`.
pub fn xavier_normal(shape: &[usize], gain: f64, rng: &mut Rng) -> Result<Tensor> {
    let (fi, fo) = fan_in_and_fan_out(shape)?;
    let std = gain * (2.0 / (fi + fo) as f64).sqrt();
    Ok(normal(shape, 0.0, std as f32, rng))
}

/// `reset_parameters` of `nn.Linear` and `nn.ConvNd`: weight from
/// `kaiming_uniform_(a=sqrt(5))`, i.e. `U(-1/sqrt(fan_in), 1/sqrt(fan_in))`,
/// and, if requested, a bias of `out` elements from the same range (zero
/// range for `fan_in == 0`, as in PyTorch).
///
/// For transposed convolutions pass the weight's own shape
/// `(in, out/groups, *k)`: PyTorch computes the fan from it the same way.
pub fn default_weight_and_bias(
    weight_shape: &[usize],
    bias_len: Option<usize>,
    rng: &mut Rng,
) -> Result<(Tensor, Option<Tensor>)> {
    let w = kaiming_uniform(
        weight_shape,
        FanMode::FanIn,
        Nonlinearity::LeakyRelu(5f64.sqrt()),
        rng,
    )?;
    let b = match bias_len {
        None => None,
        Some(n) => {
            let (fan_in, _) = fan_in_and_fan_out(weight_shape)?;
            let bound = if fan_in > 0 {
                1.0 / (fan_in as f64).sqrt()
            } else {
                0.0
            } as f32;
            Some(uniform(&[n], -bound, bound, rng))
        }
    };
    Ok((w, b))
}

/// Parameters of a fresh `nn.Linear(in_features, out_features, bias)`.
pub fn linear_params(
    in_features: usize,
    out_features: usize,
    bias: bool,
    rng: &mut Rng,
) -> Result<(Tensor, Option<Tensor>)> {
    default_weight_and_bias(
        &[out_features, in_features],
        bias.then_some(out_features),
        rng,
    )
}

/// Parameters of a fresh `nn.Conv2d(in, out, kernel, groups=, bias=)`.
pub fn conv2d_params(
    in_channels: usize,
    out_channels: usize,
    kernel: [usize; 2],
    groups: usize,
    bias: bool,
    rng: &mut Rng,
) -> Result<(Tensor, Option<Tensor>)> {
    if groups == 0 || in_channels % groups != 0 || out_channels % groups != 0 {
        return Err(KernelError::invalid(
            "init",
            &[out_channels, in_channels],
            format!("in_channels and out_channels must be divisible by groups={groups}"),
        ));
    }
    default_weight_and_bias(
        &[out_channels, in_channels / groups, kernel[0], kernel[1]],
        bias.then_some(out_channels),
        rng,
    )
}

/// Weight of a fresh `nn.Embedding`: `N(0, 1)`.
pub fn embedding_weight(num_embeddings: usize, embedding_dim: usize, rng: &mut Rng) -> Tensor {
    normal(&[num_embeddings, embedding_dim], 0.0, 1.0, rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testutil::Fixture;

    fn stats(t: &Tensor) -> (f64, f64) {
        let n = t.len() as f64;
        let mean = t.iter().map(|&v| v as f64).sum::<f64>() / n;
        let var = t.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
        (mean, var)
    }

    #[test]
    fn seeded_streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = Rng::new(8);
            (0..4).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
        // SplitMix64's published first output for seed 0.
        assert_eq!(Rng::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn uniform_and_normal_moments() {
        let mut rng = Rng::new(1);
        let u = uniform(&[200_000], -2.0, 3.0, &mut rng);
        assert!(u.iter().all(|&v| (-2.0..3.0).contains(&v)));
        let (m, v) = stats(&u);
        assert!((m - 0.5).abs() < 0.02, "{m}");
        assert!((v - 25.0 / 12.0).abs() < 0.03, "{v}");
        let n = normal(&[200_000], 1.0, 2.0, &mut rng);
        let (m, v) = stats(&n);
        assert!((m - 1.0).abs() < 0.02, "{m}");
        assert!((v - 4.0).abs() < 0.05, "{v}");
    }

    #[test]
    fn linear_and_conv_defaults_use_fan_in_bounds() {
        let mut rng = Rng::new(42);
        let (w, b) = linear_params(400, 300, true, &mut rng).unwrap();
        let bound = 1.0 / 20.0;
        assert_eq!(w.shape(), &[300, 400]);
        let max = w.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!(max <= bound && max > 0.99 * bound);
        let (m, v) = stats(&w);
        assert!(m.abs() < 1e-3 && (v - (bound as f64).powi(2) / 3.0).abs() < 2e-5);
        let b = b.unwrap();
        assert_eq!(b.shape(), &[300]);
        assert!(b.iter().all(|v| v.abs() <= bound));
        let (w, b) = conv2d_params(6, 4, [3, 3], 2, false, &mut rng).unwrap();
        assert_eq!(w.shape(), &[4, 3, 3, 3]);
        assert!(b.is_none());
        assert!(w.iter().all(|v| v.abs() <= 1.0 / 27f32.sqrt()));
        assert!(conv2d_params(5, 4, [3, 3], 2, true, &mut rng).is_err());
        assert!(fan_in_and_fan_out(&[3]).is_err());
        assert_eq!(
            kaiming_uniform(&[0, 3], FanMode::FanIn, Nonlinearity::Relu, &mut rng)
                .unwrap()
                .len(),
            0
        );
    }

    #[test]
    fn fans_gains_and_bounds_match_torch() {
        let fx = Fixture::load(include_str!("../../../tests/fixtures/kernels/init.json"));
        for case in fx.cases_with_prefix("fan/") {
            let shape = case.usizes("shape");
            let (fi, fo) = fan_in_and_fan_out(&shape).unwrap();
            assert_eq!([fi, fo], case.pair("expected_fans"), "{}", case.name);
            let bound =
                kaiming_uniform_bound(&shape, FanMode::FanIn, Nonlinearity::LeakyRelu(5f64.sqrt()))
                    .unwrap();
            let want = case.f32("kaiming_a_sqrt5_bound") as f64;
            assert!(
                (bound - want).abs() <= 1e-6 * want,
                "{}: {bound} vs {want}",
                case.name
            );
        }
        let c = fx.case("gains");
        let cases = [
            (Nonlinearity::Linear, "linear"),
            (Nonlinearity::Sigmoid, "sigmoid"),
            (Nonlinearity::Tanh, "tanh"),
            (Nonlinearity::Relu, "relu"),
            (Nonlinearity::LeakyRelu(0.01), "leaky_relu"),
            (Nonlinearity::LeakyRelu(0.2), "leaky_relu_0.2"),
            (Nonlinearity::Selu, "selu"),
        ];
        for (nl, key) in cases {
            let want = c.f32(key) as f64;
            assert!((calculate_gain(nl) - want).abs() < 1e-6, "{key}");
        }
    }
}
