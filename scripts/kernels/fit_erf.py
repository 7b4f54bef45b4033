#!/usr/bin/env python3
"""Derives the Chebyshev coefficients used by erf_f64/erfc_f64 in
src/exec/kernels/elementwise.rs, and the f32 polynomial of GELU's central range
(PHI_ODD), and prints them as Rust constants.

    "$VENV"/bin/python scripts/kernels/fit_erf.py

Needs mpmath (it comes with torch's sympy dependency) for 40-digit
reference values, and numpy for the least-squares Chebyshev fit at
Chebyshev nodes (close to the minimax polynomial for smooth functions).

Three pieces, each smooth and slowly varying so that a short series fits it:
  ERF_SMALL:  erf(z) / z           as a function of t = z^2 on [0, 1]  (|z| <= 1)
  ERFC_MID:   erfc(z) e^(z^2) z    as a function of s = 1/z on [0.5, 1] (1 <= z <= 2)
  ERFC_TAIL:  the same function                 of s = 1/z on [0, 0.5]  (z >= 2)
Each interval is mapped affinely onto [-1, 1] for the Chebyshev variable.

PHI_ODD is evaluated in f32 by Horner's rule, so it is a plain polynomial:
  PHI_ODD:    erf(x / sqrt 2) / 2x  as a function of u = x^2 on [0, 2]  (|x| <= sqrt 2)
fitted for relative error by iteratively reweighted least squares (close to minimax).
"""

import mpmath as mp
import numpy as np
from numpy.polynomial import chebyshev as C

mp.mp.dps = 40


def erf_over_z(t):
    if t == 0:
        return 2 / mp.sqrt(mp.pi)
    z = mp.sqrt(mp.mpf(t))
    return mp.erf(z) / z


def scaled_erfc(s):
    if s == 0:
        return 1 / mp.sqrt(mp.pi)
    z = 1 / mp.mpf(s)
    return mp.erfc(z) * mp.exp(z * z) * z


def fit(f, a, b, deg, nodes=512):
    k = np.arange(nodes)
    x = np.cos(np.pi * (k + 0.5) / nodes)
    ys = np.array([float(f((v + 1) / 2 * (b - a) + a)) for v in x])
    c = C.chebfit(x, ys, deg)
    grid = np.linspace(a, b, 4001)
    approx = C.chebval((grid - a) / (b - a) * 2 - 1, c)
    exact = np.array([float(f(v)) for v in grid])
    return c, float(np.max(np.abs(approx - exact) / np.abs(exact)))


def phi_odd(u):
    if u == 0:
        return 1 / mp.sqrt(2 * mp.pi)
    x = mp.sqrt(mp.mpf(u))
    return mp.erf(x / mp.sqrt(2)) / (2 * x)


def fit_monomial_relative(f, b, deg, nodes=2000, rounds=30):
    k = np.arange(nodes)
    u = (np.cos(np.pi * (k + 0.5) / nodes) + 1) / 2 * b
    ys = np.array([float(f(v)) for v in u])
    a = np.vander(u, deg + 1, increasing=True) / ys[:, None]
    w = np.ones(nodes)
    for _ in range(rounds):
        c, *_ = np.linalg.lstsq(a * w[:, None], w, rcond=None)
        r = np.abs(a @ c - 1)
        w = w * np.sqrt(r / r.max()) + 1e-3
    grid = np.linspace(0, b, 20001)
    exact = np.array([float(f(v)) for v in grid])
    return c, float(np.max(np.abs(np.polyval(c[::-1], grid) / exact - 1)))


def main():
    for name, f, a, b, deg in [
        ("ERF_SMALL", erf_over_z, 0.0, 1.0, 10),
        ("ERFC_MID", scaled_erfc, 0.5, 1.0, 16),
        ("ERFC_TAIL", scaled_erfc, 0.0, 0.5, 20),
    ]:
        c, err = fit(f, a, b, deg)
        print(f"// Fitted on [{a}, {b}], degree {deg}, max relative error {err:.1e}.")
        print(f"const {name}: [f64; {len(c)}] = [")
        for v in c:
            print(f"    {float(v)!r},")
        print("];")
    c, err = fit_monomial_relative(phi_odd, 2.0, 6)
    print(f"// Fitted on [0, 2], degree 6, max relative error {err:.1e}.")
    print(f"const PHI_ODD: [f32; {len(c)}] = [")
    for v in c:
        print(f"    {np.format_float_positional(np.float32(v), unique=True, trim='-') if abs(v) > 1e-4 else np.format_float_scientific(np.float32(v), unique=True, trim='-')},")
    print("];")


if __name__ == "__main__":
    main()
