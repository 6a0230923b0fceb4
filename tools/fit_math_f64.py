#!/usr/bin/env python3
"""Fits the polynomial coefficients used by include/nuvec/kernels/math_f64.h.

Method: Chebyshev interpolation of the target function at high precision
(mpmath), truncated, converted to monomial form on [lo, hi], rounded to
double, then the relative error of the rounded polynomial is measured on a
dense grid.  Prints C++ hex-float literals.  Usage: python3 fit_math_f64.py
"""
import mpmath as mp

mp.mp.dps = 80


def cheb_fit(f, lo, hi, deg, nodes=None):
    n = nodes or (deg + 1)
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    xs = [mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n) for k in range(n)]
    ys = [f((hi - lo) / 2 * t + (hi + lo) / 2) for t in xs]
    c = []
    for j in range(deg + 1):
        s = mp.fsum(ys[k] * mp.cos(mp.pi * j * (k + mp.mpf(1) / 2) / n) for k in range(n))
        c.append(s * (1 if j == 0 else 2) / n)
    # Chebyshev -> monomial in t, then t = a*z + b
    # build T_j as polynomials in t
    T = [[mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]]
    for j in range(2, deg + 1):
        a = [mp.mpf(0)] + [2 * v for v in T[j - 1]]
        b = T[j - 2] + [mp.mpf(0)] * (len(a) - len(T[j - 2]))
        T.append([a[i] - b[i] for i in range(len(a))])
    pt = [mp.mpf(0)] * (deg + 1)
    for j in range(deg + 1):
        for i, v in enumerate(T[j]):
            pt[i] += c[j] * v
    a = 2 / (hi - lo)
    b = -(hi + lo) / (hi - lo)
    # p(z) = sum pt[i] (a z + b)^i
    pz = [mp.mpf(0)] * (deg + 1)
    for i in range(deg + 1):
        for k in range(i + 1):
            pz[k] += pt[i] * mp.binomial(i, k) * a**k * b**(i - k)
    return pz


def to_double(v):
    return float(v)


def hexlit(v):
    return float(v).hex()


def horner(cs, z):
    r = mp.mpf(0)
    for c in reversed(cs):
        r = r * z + mp.mpf(c)
    return r


def fit(name, f, lo, hi, deg, check=None, npts=4000):
    cs = cheb_fit(f, lo, hi, deg)
    cd = [to_double(c) for c in cs]
    worst = mp.mpf(0)
    for k in range(npts + 1):
        z = mp.mpf(lo) + (mp.mpf(hi) - mp.mpf(lo)) * k / npts
        ref = f(z)
        if ref == 0:
            continue
        e = abs(horner(cd, z) - ref) / abs(ref)
        if e > worst:
            worst = e
    print(f"// {name}: degree {deg} on [{float(lo):.6g}, {float(hi):.6g}], max rel err 2^{float(mp.log(worst, 2)):.1f}")
    print(f"constexpr double {name}[] = {{" + ", ".join(hexlit(c) for c in cd) + "};")
    return cd


def series_guard(f, g, eps=mp.mpf('1e-30')):
    """Evaluates f(z) but uses the series g(z) near 0."""
    return lambda z: g(z) if abs(z) < eps else f(z)


def main():
    import sys
    which = sys.argv[1:] or None
    def want(n):
        return which is None or n in which
    L2 = mp.log(2)
    # exp: e^r = 1 + r + r^2 q(r), |r| <= ln2/2 (+margin)
    if want('exp'):
        fit('kExpQ', lambda r: (mp.exp(r) - 1 - r) / r**2 if r != 0 else mp.mpf(1) / 2, -0.35, 0.35, 11)
    # log: log1p(f) = f - hf + s (hf + z P(z)), s = f/(2+f), z = s^2, P(z) = (2 atanh(s) - 2 s)/(s z)
    zl = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)
    zmax = zl**2 * mp.mpf('1.0001')
    def logP(z):
        if z == 0:
            return mp.mpf(2) / 3
        s = mp.sqrt(z)
        return (2 * mp.atanh(s) - 2 * s) / (s * z)
    if want('log'):
        fit('kLogP', logP, 0, zmax, 8)
    def powQ7(z):
        # log m = 2s + 2s^3/3 + 2s^5/5 + s^7 Q7(s^2), s = f/(2+f)
        if z == 0:
            return mp.mpf(2) / 7
        s = mp.sqrt(z)
        return (2 * mp.atanh(s) - 2 * s - 2 * s**3 / 3 - 2 * s**5 / 5) / s**7
    if want('pow'):
        fit('kPowQ7', powQ7, 0, zmax, 7)
    pio4 = mp.pi / 4 * mp.mpf('1.0001')
    if want('sin'):
        fit('kSinS', lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z)**3 if z else -mp.mpf(1) / 6, 0, pio4**2, 7)
        fit('kCosC', lambda z: (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z**2 if z else mp.mpf(1) / 24, 0, pio4**2, 7)
    if want('tan'):
        fit('kTanT', lambda z: (mp.tan(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z)**3 if z else mp.mpf(1) / 3, 0, pio4**2, 14)
    if want('atan'):
        t8 = (mp.sqrt(2) - 1) * mp.mpf('1.0001')
        fit('kAtanA', lambda z: (mp.atan(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z)**3 if z else -mp.mpf(1) / 3, 0, t8**2, 12)
    if want('asin'):
        fit('kAsinP', lambda z: (mp.asin(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z)**3 if z else mp.mpf(1) / 6, 0, mp.mpf('0.2501'), 13)
    if want('sinh'):
        fit('kSinhS', lambda z: (mp.sinh(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z)**3 if z else mp.mpf(1) / 6, 0, mp.mpf('1.0001'), 8)
    if want('tanh'):
        fit('kTanhT', lambda z: (mp.tanh(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z)**3 if z else -mp.mpf(1) / 3, 0, mp.mpf('0.5626'), 12)
    if want('asinh'):
        fit('kAsinhP', lambda z: (mp.asinh(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z)**3 if z else -mp.mpf(1) / 6, 0, mp.mpf('0.2501'), 13)
    c0 = 2 / mp.sqrt(mp.pi)
    if want('erf'):
        # erf(x) = x (c0 + z (p0 + z (p1 + z P2(z)))), z = x^2, |x| <= 1,
        # p0 = -c0/3, p1 = c0/10 (the three leading Horner steps run in
        # double-double)
        def erfP2(z):
            if z == 0:
                return -c0 / 42
            return (((mp.erf(mp.sqrt(z)) / mp.sqrt(z) - c0) / z + c0 / 3) / z - c0 / 10) / z
        fit('kErfP2', erfP2, 0, mp.mpf('1.0001'), 10)
        # erfc(x) = e^(-x^2) R(x), 1 <= x <= 6.1; R = erfcx as a polynomial in t = x - mid on 4 pieces
        erfcx = lambda x: mp.erfc(x) * mp.exp(x * x)
        for (a, b) in [(1, 1.75), (1.75, 2.75), (2.75, 4), (4, 6.1)]:
            m = mp.mpf(a + b) / 2
            fit('kErfcx_%g_%g (t = x - %g)' % (a, b, m), lambda t: erfcx(t + m), a - m, b - m, 16, npts=1000)
    if want('erfinv'):
        # Starting guess (then one Halley step): w = -log(1 - a^2);
        # erfinv(a)/a = P1(w) for w < 5, erfinv(a) = P2(sqrt(w)) above.
        ainv = lambda w: mp.sqrt(-mp.expm1(-w))
        fit('kErfinvP1', lambda w: mp.erfinv(ainv(w)) / ainv(w) if w else mp.sqrt(mp.pi) / 2, 0, 5, 11, npts=1000)
        fit('kErfinvP2', lambda s: mp.erfinv(ainv(s * s)), mp.sqrt(5), mp.mpf('6.1'), 11, npts=1000)

if __name__ == '__main__':
    main()
