#!/usr/bin/env python3
"""Fits the polynomials used by include/nuvec/kernels/math_f32.h.

Run: python3 tools/fit_math_f32.py   (needs mpmath). Prints C++ hex-float
coefficient lists (highest degree first, for Horner) and the max relative
error of each fit, measured at high precision. The header's kernels evaluate
these in double precision, so fits target ~2^-40 relative error.
"""
import mpmath as mp

mp.mp.prec = 400


def hexd(v):
    return float(v).hex()


def fit(name, f, a, b, deg, rel=True):
    """Chebyshev fit of f on [a, b] in the variable t (f takes t)."""
    coeffs, err = mp.chebyfit(f, [a, b], deg + 1, error=True)
    # Measure the error of the double-rounded coefficients, in high precision.
    cd = [mp.mpf(float(c)) for c in coeffs]
    worst = mp.mpf(0)
    for i in range(2001):
        t = a + (b - a) * mp.mpf(i) / 2000
        p = mp.polyval(cd, t)
        v = f(t)
        e = abs(p - v) / (abs(v) if rel else 1)
        worst = max(worst, e)
    print(f"// {name}: degree {deg} on [{float(a)}, {float(b)}], "
          f"max {'rel' if rel else 'abs'} err 2^{float(mp.log(worst, 2)):.1f}")
    print("{" + ", ".join(hexd(c) for c in cd) + "}")
    return cd


def atan_over_t(s):  # s = t^2
    if s == 0:
        return mp.mpf(1)
    t = mp.sqrt(s)
    return mp.atan(t) / t


def erf_over_x(s):  # s = x^2
    if s == 0:
        return 2 / mp.sqrt(mp.pi)
    x = mp.sqrt(s)
    return mp.erf(x) / x


def erfc_scaled(t, c):  # h(x) = erfc(x) exp(x^2), x = t + c
    x = t + c
    return mp.erfc(x) * mp.exp(x * x)


if __name__ == "__main__":
    tan8 = mp.tan(mp.pi / 8)
    fit("atan(t)/t in s=t^2", atan_over_t, 0, tan8 ** 2 * 1.001, 8)
    fit("erf(x)/x in s=x^2", erf_over_x, 0, 1, 9)
    fit("erfc(x)exp(x^2), x in [1,2.5], t=x-1.75",
        lambda t: erfc_scaled(t, mp.mpf(1.75)), -0.75, 0.75, 14)
    fit("erfc(x)exp(x^2), x in [2.5,4.25], t=x-3.375",
        lambda t: erfc_scaled(t, mp.mpf(3.375)), -0.875, 0.875, 12)

    # erfinv(y)/y as a function of w = -log(1-y^2): rough start for Newton.
    def einv_w(w):
        y = mp.sqrt(1 - mp.exp(-w))
        if y == 0:
            return mp.sqrt(mp.pi) / 2
        return mp.erfinv(y) / y
    fit("erfinv(y)/y, w=-log(1-y^2) in [0,5]", einv_w, 0, 5, 9)
    fit("erfinv(y)/y, v=sqrt(w), w in [5,17]",
        lambda v: einv_w(v * v), mp.sqrt(5), mp.sqrt(17), 9)

    # Bits of 2/pi in 32-bit words, word k = bits 32k+1 .. 32k+32.
    two_over_pi = 2 / mp.pi
    words = []
    v = two_over_pi
    for _ in range(10):
        v *= 2 ** 32
        w = int(mp.floor(v))
        words.append(w)
        v -= w
    print("// 2/pi words")
    print("{" + ", ".join(f"0x{w:08x}u" for w in words) + "}")
