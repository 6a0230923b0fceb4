#!/usr/bin/env python3
"""Fits the polynomials used by include/nuvec/kernels/math_f32.h.

Run: python3 tools/fit_math_f32.py   (needs mpmath). Prints C++ hex-float
coefficient lists (highest degree first, for Horner) and the max relative
error of each fit, measured at high precision. The double kernels target ~2^-40
relative error; the float32 kernels (exp, log, log2, log10, tanh, erf, sin/cos
helpers) use fit_float: weighted least squares on Chebyshev nodes with the
coefficients rounded to float one at a time (lowest power first, the rest
refitted), which keeps the rounded polynomial close to the best one.
Run with --float to print only those.
"""
import struct
import sys
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


def f32(v):
    return mp.mpf(struct.unpack("f", struct.pack("f", float(v)))[0])


def hexf(v):
    m = float(v).hex()  # 0x1.xxxxxx00000p+e -> 0x1.xxxxxxp+e
    mant, exp = m.split("p")
    mant = mant.rstrip("0").rstrip(".") if "." in mant else mant
    return f"{mant}p{exp}f"


def fit_float(name, g, a, b, powers, w=lambda t: 1, n=300):
    """Minimizes max |w(t) (p(t) - g(t))| approximately; float coefficients."""
    a, b = mp.mpf(a), mp.mpf(b)
    nodes = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (i + 0.5) / n)
             for i in range(n)]
    fixed = {}
    free = list(powers)
    while free:
        A = mp.matrix(n, len(free))
        y = mp.matrix(n, 1)
        for i, t in enumerate(nodes):
            wt = w(t)
            for j, p in enumerate(free):
                A[i, j] = wt * t ** p
            y[i] = wt * (g(t) - sum(c * t ** p for p, c in fixed.items()))
        x, _ = mp.qr_solve(A, y)
        fixed[free[0]] = f32(x[0])
        free = free[1:]
    worst = mp.mpf(0)
    for i in range(2001):
        t = a + (b - a) * i / 2000
        if t == 0:
            continue
        p = sum(c * t ** k for k, c in fixed.items())
        worst = max(worst, abs(w(t) * (p - g(t))))
    print(f"// {name}: powers {min(powers)}..{max(powers)} on "
          f"[{float(a):.4g}, {float(b):.4g}], max weighted err "
          f"2^{float(mp.log(worst, 2)):.1f}")
    print("  " + ", ".join(hexf(fixed[p]) for p in sorted(fixed, reverse=True)))


def float_fits():
    mp.mp.prec = 120
    ln2h = mp.log(2) / 2 * mp.mpf("1.0001")
    fit_float("exp: e^r = 1 + r + r^2 q(r)",
              lambda r: (mp.exp(r) - 1 - r) / r ** 2 if r else mp.mpf(0.5),
              -ln2h, ln2h, range(6), w=lambda r: r * r)
    lo, hi = mp.sqrt(0.5) - 1, mp.sqrt(2) - 1
    fit_float("log: ln(1+f) = f + f^2 Q(f)",
              lambda f: (mp.log1p(f) - f) / f ** 2 if f else mp.mpf(-0.5),
              lo, hi, range(9),
              w=lambda f: f * f / abs(mp.log1p(f)) if f else 0)
    for nm, k in (("log2", 1 / mp.log(2)), ("log10", 1 / mp.log(10))):
        c = f32(k) + f32(k - f32(k))  # the header's two-float constant
        fit_float(f"{nm}: {nm}(1+f) = f C + f^2 Q(f)",
                  lambda f, c=c, k=k: (mp.log1p(f) * k - f * c) / f ** 2
                  if f else -c / 2, lo, hi, range(9),
                  w=lambda f, k=k: f * f / abs(mp.log1p(f) * k) if f else 0)
    fit_float("erf: erf(a) = a + a Q(a^2), a < 1",
              lambda s: mp.erf(mp.sqrt(s)) / mp.sqrt(s) - 1 if s
              else 2 / mp.sqrt(mp.pi) - 1, 0, 1, range(7))
    # erf(a) = 1 - E(a - 2.25) on [1, 4]: E fits erfc to an absolute error
    # (the result's ULP is 2^-24 there), and 1 - E keeps E's rounding small.
    fit_float("erf: E(t) = erfc(t + 2.25), a in [1, 4]",
              lambda t: mp.erfc(t + mp.mpf(2.25)), mp.mpf(1) - mp.mpf(2.25),
              mp.mpf(4) - mp.mpf(2.25), range(16))
    # tanh, a < 0.8: tanh(a) = a + a a^2 Q(a^2), relative error.
    fit_float("tanh: tanh(a) = a + a s Q(s), s = a^2, a < 0.8",
              lambda s: (mp.tanh(mp.sqrt(s)) / mp.sqrt(s) - 1) / s
              if s else mp.mpf(-1) / 3, 0, mp.mpf("0.64"), range(6),
              w=lambda s: s * mp.sqrt(s) / mp.tanh(mp.sqrt(s)) if s else 0)
    # tanh, 0.8 <= a <= 9.5: e^-2a = 2^n (1 + t), n = rint(-a K) with K the
    # header's float below 2 log2(e), v = a + n ln2/2 in [0.8 d, 9.5 d] +-
    # ln2/4 (d = 1 - K ln2/2). t = v X(v) - v; X is weighted by the largest
    # q = 1 - tanh(a) among the a that reach v (an error in 1 + t moves the
    # result by q times it: X need only be accurate where a is small).
    k_tanh = f32(float.fromhex("0x1.6a3a3ap+1"))
    d = 1 - k_tanh * mp.log(2) / 2
    q4 = mp.log(2) / 4

    def qmax(v):
        amin = max(mp.mpf("0.8"), (v - q4) / d)
        return 2 / (1 + mp.exp(2 * amin))
    fit_float("tanh: e^(-2v) = 1 + v X(v) - v, a >= 0.8",
              lambda v: mp.expm1(-2 * v) / v + 1 if v else mp.mpf(-1),
              mp.mpf("0.8") * d - q4 - mp.mpf(2) ** -10,
              mp.mpf("9.5") * d + q4 + mp.mpf(2) ** -10, range(6),
              w=lambda v: qmax(v) * abs(v) / mp.exp(-2 * v))
    # u = -2y/(1 + y) = y R(y), y = e^-2a <= e^-1.6: the result moves by
    # about y times u's error, hence the weight y^2.
    fit_float("tanh: -2y/(1 + y) = y R(y), y <= e^-1.6",
              lambda y: -2 / (1 + y), 0, mp.exp(mp.mpf("-1.6")) * 1.001,
              range(5), w=lambda y: y * y)
    fit_float("sin_f: sin(r) = r + r^3 S(r^2), |r| <= 0.8",
              lambda s: (mp.sin(mp.sqrt(s)) - mp.sqrt(s)) / mp.sqrt(s) ** 3
              if s else mp.mpf(-1) / 6, 0, 0.64, range(4), w=lambda s: s)
    fit_float("cos_f: cos(r) = 1 - r^2/2 + r^4 C(r^2), |r| <= 0.8",
              lambda s: (mp.cos(mp.sqrt(s)) - 1 + s / 2) / s ** 2
              if s else mp.mpf(1) / 24, 0, 0.64, range(4),
              w=lambda s: s * s / mp.cos(mp.sqrt(s)))


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
    if "--float" in sys.argv:
        float_fits()
        sys.exit(0)
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
