/* Fused CPU kernels for the protocol CNN's pooling layers (see kernels.py).

   Each layer is "2x2 max-pool, then activation", pooling first (both activations are monotone).
   The forward pass writes the pooled activation and a one-byte code of which window position
   won; the backward pass routes the gradient to that position only. The full-resolution map
   and a separate zero fill never exist, which is where PyTorch's own ops spend most of their
   time on this network. Ties go to the first position in row-major window order and NaN wins,
   exactly as PyTorch's max_pool2d decides.

   Arithmetic is IEEE float32 in a fixed order (built with -ffp-contract=off, no fast-math).
   Channels go in blocks of 16 lanes; lanes never mix, so the vector width the compiler emits
   changes no result. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LANES 16
/* The 3x3 taps and the 2x2 window positions: constant offsets once unrolled. */
#if defined(__clang__)
#define UNROLLED _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define UNROLLED _Pragma("GCC unroll 16")
#else
#define UNROLLED
#endif
typedef float vf __attribute__((vector_size(4 * LANES)));
typedef int32_t vi __attribute__((vector_size(4 * LANES)));
typedef uint8_t vb __attribute__((vector_size(LANES)));

/* A block of n <= LANES channels; the full block is the fast, common case. */
static inline vf load(const float *p, int64_t n) {
    vf v = {0};
    if (n == LANES) memcpy(&v, p, sizeof v);
    else for (int64_t k = 0; k < n; k++) v[k] = p[k];
    return v;
}

static inline void store(float *p, vf v, int64_t n) {
    if (n == LANES) memcpy(p, &v, sizeof v);
    else for (int64_t k = 0; k < n; k++) p[k] = v[k];
}

static inline vi load_code(const uint8_t *p, int64_t n) {
    vb v = {0};
    if (n == LANES) memcpy(&v, p, sizeof v);
    else for (int64_t k = 0; k < n; k++) v[k] = p[k];
    return __builtin_convertvector(v, vi);
}

static inline void store_code(uint8_t *p, vi won, int64_t n) {
    vb v = __builtin_convertvector(won, vb);
    if (n == LANES) memcpy(p, &v, sizeof v);
    else for (int64_t k = 0; k < n; k++) p[k] = v[k];
}

static inline vf pick(vi mask, vf yes, vf no) {
    return (vf)(((vi)yes & mask) | ((vi)no & ~mask));
}

/* Running 2x2 max in window order: strictly greater wins, and NaN wins (torch's rule). */
static inline void challenge(vf v, int f, vf *best, vi *won) {
    if (f == 0) { *best = v; *won = (vi){0}; return; }
    vi take = (v > *best) | (v != v);
    *best = pick(take, v, *best);
    *won = (*won & ~take) | (((vi){0} + f) & take);
}

/* torch.relu (NaN passes) and F.leaky_relu. */
static inline vf activate(vf v, int leaky, float slope) {
    vi pos = v > 0.0f;
    vf neg = leaky ? v * slope : pick(v != v, v, (vf){0});
    return pick(pos, v, neg);
}

/* threshold_backward on the output, and leaky_relu_backward (output > 0 iff input > 0). */
static inline vf activation_grad(vf g, vf out, int leaky, float slope) {
    if (leaky) return pick(out > 0.0f, g, g * slope);
    return pick(out <= 0.0f, (vf){0}, g);
}

/* Input value under tap t (0..8, row-major 3x3) of window position f (0..3, row-major 2x2),
   in the 4x4 neighbourhood whose top-left corner is x. */
static inline float tap(const float *x, int64_t wp, int f, int t) {
    return x[((f >> 1) + t / 3) * wp + (f & 1) + t % 3];
}

/* conv 3x3 (input already zero-padded by one) -> 2x2 max-pool -> activation.
   xp: N x Cin x (H+2) x (W+2); wt: (Cin*9) x C (tap-major); bias: C.
   y and code: N x H/2 x W/2 x C (channels last); code is the winning window position 0..3. */
void histres_conv_pool_forward(const float *restrict xp, int64_t n_img, int64_t cin,
                               int64_t h, int64_t w, const float *restrict wt,
                               const float *restrict bias, int64_t c, int leaky, float slope,
                               float *restrict y, uint8_t *restrict code) {
    const int64_t hp = h + 2, wp = w + 2, ho = h / 2, wo = w / 2, taps = cin * 9;
    vf weights[taps];
    for (int64_t k0 = 0; k0 < c; k0 += LANES) {
        const int64_t lanes = c - k0 < LANES ? c - k0 : LANES;
        for (int64_t t = 0; t < taps; t++) weights[t] = load(wt + t * c + k0, lanes);
        const vf b = load(bias + k0, lanes);
        for (int64_t n = 0; n < n_img; n++) {
            for (int64_t i = 0; i < ho; i++) {
                for (int64_t j = 0; j < wo; j++) {
                    const float *win = xp + n * cin * hp * wp + 2 * i * wp + 2 * j;
                    vf acc[4] = {{0}, {0}, {0}, {0}}, best;
                    vi won;
                    for (int64_t ch = 0; ch < cin; ch++)
                        UNROLLED for (int t = 0; t < 9; t++)
                            UNROLLED for (int f = 0; f < 4; f++)
                                acc[f] += tap(win + ch * hp * wp, wp, f, t) * weights[ch * 9 + t];
                    for (int f = 0; f < 4; f++) challenge(acc[f] + b, f, &best, &won);
                    const int64_t at = ((n * ho + i) * wo + j) * c + k0;
                    store(y + at, activate(best, leaky, slope), lanes);
                    store_code(code + at, won, lanes);
                }
            }
        }
    }
}

/* Weight and bias gradients of histres_conv_pool_forward (the images need none).
   g, y, code: N x H/2 x W/2 x C; dwt: (Cin*9) x C; db: C.
   Sums run over one image's positions in order, then over images in order. */
void histres_conv_pool_backward(const float *restrict xp, int64_t n_img, int64_t cin,
                                int64_t h, int64_t w, const float *restrict g,
                                const float *restrict y, const uint8_t *restrict code,
                                int64_t c, int leaky, float slope, float *restrict dwt,
                                float *restrict db) {
    const int64_t hp = h + 2, wp = w + 2, ho = h / 2, wo = w / 2, taps = cin * 9;
    vf part[taps];
    memset(dwt, 0, sizeof(float) * (size_t)(taps * c));
    memset(db, 0, sizeof(float) * (size_t)c);
    for (int64_t k0 = 0; k0 < c; k0 += LANES) {
        const int64_t lanes = c - k0 < LANES ? c - k0 : LANES;
        for (int64_t n = 0; n < n_img; n++) {
            vf part_b = {0};
            for (int64_t t = 0; t < taps; t++) part[t] = (vf){0};
            for (int64_t i = 0; i < ho; i++) {
                for (int64_t j = 0; j < wo; j++) {
                    const int64_t at = ((n * ho + i) * wo + j) * c + k0;
                    const float *win = xp + n * cin * hp * wp + 2 * i * wp + 2 * j;
                    const vf gp = activation_grad(load(g + at, lanes), load(y + at, lanes), leaky,
                                                  slope);
                    const vi won = load_code(code + at, lanes);
                    const vi at1 = won == 1, at2 = won == 2, at3 = won == 3;
                    part_b += gp;
                    /* Each lane's input under tap t at its own winning position. */
                    for (int64_t ch = 0; ch < cin; ch++) {
                        const float *x = win + ch * hp * wp;
                        UNROLLED for (int t = 0; t < 9; t++) {
                            vf v = pick(at1, (vf){0} + tap(x, wp, 1, t), (vf){0} + tap(x, wp, 0, t));
                            v = pick(at2, (vf){0} + tap(x, wp, 2, t), v);
                            v = pick(at3, (vf){0} + tap(x, wp, 3, t), v);
                            part[ch * 9 + t] += gp * v;
                        }
                    }
                }
            }
            for (int64_t t = 0; t < taps; t++)
                store(dwt + t * c + k0, load(dwt + t * c + k0, lanes) + part[t], lanes);
            store(db + k0, load(db + k0, lanes) + part_b, lanes);
        }
    }
}

/* 2x2 max-pool -> activation of a channels-last map, written in NCHW order (fc1's input).
   z: N x H x W x C; y: N x C x H/2 x W/2; code: N x H/2 x W/2 x C. */
void histres_pool_forward(const float *z, int64_t n_img, int64_t h, int64_t w, int64_t c,
                          int leaky, float slope, float *y, uint8_t *code) {
    const int64_t ho = h / 2, wo = w / 2;
    for (int64_t n = 0; n < n_img; n++) {
        for (int64_t i = 0; i < ho; i++) {
            for (int64_t j = 0; j < wo; j++) {
                const int64_t at = ((n * ho + i) * wo + j) * c;
                float *out = y + n * c * ho * wo + i * wo + j;
                for (int64_t k0 = 0; k0 < c; k0 += LANES) {
                    const int64_t lanes = c - k0 < LANES ? c - k0 : LANES;
                    vf best;
                    vi won;
                    for (int f = 0; f < 4; f++) {
                        const int64_t r = 2 * i + (f >> 1), s = 2 * j + (f & 1);
                        challenge(load(z + ((n * h + r) * w + s) * c + k0, lanes), f, &best, &won);
                    }
                    vf a = activate(best, leaky, slope);
                    for (int64_t k = 0; k < lanes; k++) out[(k0 + k) * ho * wo] = a[k];
                    store_code(code + at + k0, won, lanes);
                }
            }
        }
    }
}

/* Gradient of histres_pool_forward: every element of dz (N x H x W x C) is written once. */
void histres_pool_backward(const float *g, const float *y, const uint8_t *code, int64_t n_img,
                           int64_t h, int64_t w, int64_t c, int leaky, float slope, float *dz) {
    const int64_t ho = h / 2, wo = w / 2;
    for (int64_t n = 0; n < n_img; n++) {
        for (int64_t i = 0; i < ho; i++) {
            for (int64_t j = 0; j < wo; j++) {
                const int64_t at = ((n * ho + i) * wo + j) * c;
                const int64_t from = n * c * ho * wo + i * wo + j;
                for (int64_t k0 = 0; k0 < c; k0 += LANES) {
                    const int64_t lanes = c - k0 < LANES ? c - k0 : LANES;
                    vf gk = {0}, yk = {0};
                    for (int64_t k = 0; k < lanes; k++) {
                        gk[k] = g[from + (k0 + k) * ho * wo];
                        yk[k] = y[from + (k0 + k) * ho * wo];
                    }
                    vf gp = activation_grad(gk, yk, leaky, slope);
                    vi won = load_code(code + at + k0, lanes);
                    for (int f = 0; f < 4; f++) {
                        const int64_t r = 2 * i + (f >> 1), s = 2 * j + (f & 1);
                        store(dz + ((n * h + r) * w + s) * c + k0, pick(won == f, gp, (vf){0}),
                              lanes);
                    }
                }
            }
        }
    }
}
