/* Fused CPU kernels for the protocol CNN's pooling layers (see kernels.py).

   Each layer is "2x2 max-pool, then activation", pooling first (both activations are monotone).
   The forward pass writes the pooled activation and a one-byte code of which window position
   won; the backward pass routes the gradient to that position only. The full-resolution map
   and a separate zero fill never exist, which is where PyTorch's own ops spend most of their
   time on this network. Ties go to the first position in row-major window order and NaN wins,
   exactly as PyTorch's max_pool2d decides.

   Arithmetic is IEEE float32 in a fixed order (built with -ffp-contract=off, no fast-math).
   Channels go in blocks of 8 lanes; lanes never mix, so neither the block width nor the vector
   width the compiler emits changes any result. 8 lanes are one AVX2 register, so the conv
   loops' weights, sums and inputs nearly fit in the 16 registers; 16 lanes spilled heavily.
   Loops over independent outputs run in whatever order is fastest; every sum runs in the
   order written next to it. Where two NaNs meet in one sum or product, which of them comes out
   (sign, payload) is the compiler's choice of operand order, not the source's: that differs
   between builds of the same source (benchmarks/kernel_bits.py); every other bit does not. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LANES 8
/* The 3x3 taps and the 2x2 window positions: constant offsets once unrolled. */
#if defined(__clang__)
#define UNROLLED _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define UNROLLED _Pragma("GCC unroll 16")
#else
#define UNROLLED
#endif
/* The hot loops are instantiated with constant arguments (cin == 1, a full block of lanes),
   which only pays once they are inlined into their callers. */
#if defined(__GNUC__)
#define INLINE static inline __attribute__((always_inline))
#else
#define INLINE static inline
#endif
typedef float vf __attribute__((vector_size(4 * LANES)));
typedef int32_t vi __attribute__((vector_size(4 * LANES)));
typedef int16_t vh __attribute__((vector_size(2 * LANES)));
typedef uint8_t vb __attribute__((vector_size(LANES)));

/* A block of n <= LANES channels; the full block is the fast, common case. */
INLINE vf load(const float *p, int64_t n) {
    vf v = {0};
    if (n == LANES) memcpy(&v, p, sizeof v);
    else for (int64_t k = 0; k < n; k++) v[k] = p[k];
    return v;
}

INLINE void store(float *p, vf v, int64_t n) {
    if (n == LANES) memcpy(p, &v, sizeof v);
    else for (int64_t k = 0; k < n; k++) p[k] = v[k];
}

INLINE vi load_code(const uint8_t *p, int64_t n) {
    vb v = {0};
    if (n == LANES) memcpy(&v, p, sizeof v);
    else for (int64_t k = 0; k < n; k++) v[k] = p[k];
    return __builtin_convertvector(v, vi);
}

/* Codes are 0..3, so narrowing through 16 bits is exact; GCC packs that way in a few
   instructions, where a direct 32 -> 8 bit conversion goes lane by lane. */
INLINE void store_code(uint8_t *p, vi won, int64_t n) {
    vb v = __builtin_convertvector(__builtin_convertvector(won, vh), vb);
    if (n == LANES) memcpy(p, &v, sizeof v);
    else for (int64_t k = 0; k < n; k++) p[k] = v[k];
}

INLINE vf pick(vi mask, vf yes, vf no) {
    return (vf)(((vi)yes & mask) | ((vi)no & ~mask));
}

/* Running 2x2 max in window order: strictly greater wins, and NaN wins (torch's rule). */
INLINE void challenge(vf v, int f, vf *best, vi *won) {
    if (f == 0) { *best = v; *won = (vi){0}; return; }
    vi take = (v > *best) | (v != v);
    *best = pick(take, v, *best);
    *won = (*won & ~take) | (((vi){0} + f) & take);
}

/* torch.relu (NaN passes) and F.leaky_relu. */
INLINE vf activate(vf v, int leaky, float slope) {
    vi pos = v > 0.0f;
    vf neg = leaky ? v * slope : pick(v != v, v, (vf){0});
    return pick(pos, v, neg);
}

/* threshold_backward on the output, and leaky_relu_backward (output > 0 iff input > 0). */
INLINE vf activation_grad(vf g, vf out, int leaky, float slope) {
    if (leaky) return pick(out > 0.0f, g, g * slope);
    return pick(out <= 0.0f, (vf){0}, g);
}

/* Input value under tap t (0..8, row-major 3x3) of window position f (0..3, row-major 2x2),
   in the 4x4 neighbourhood whose top-left corner is x. */
INLINE float tap(const float *x, int64_t wp, int f, int t) {
    return x[((f >> 1) + t / 3) * wp + (f & 1) + t % 3];
}

/* One image and one block of channels of histres_conv_pool_forward; weights: cin * 9 taps.
   Each window position's sum runs over channels, then taps, in order, from 0; then + bias. */
INLINE void conv_pool_image(const float *x, int64_t cin, int64_t hp, int64_t wp, int64_t ho,
                            int64_t wo, const vf *weights, vf b, int64_t c, int64_t lanes,
                            int leaky, float slope, float *y, uint8_t *code) {
    for (int64_t i = 0; i < ho; i++) {
        for (int64_t j = 0; j < wo; j++) {
            const float *win = x + 2 * i * wp + 2 * j;
            vf acc[4] = {{0}, {0}, {0}, {0}}, best;
            vi won;
            for (int64_t ch = 0; ch < cin; ch++)
                UNROLLED for (int t = 0; t < 9; t++)
                    UNROLLED for (int f = 0; f < 4; f++)
                        acc[f] += tap(win + ch * hp * wp, wp, f, t) * weights[ch * 9 + t];
            for (int f = 0; f < 4; f++) challenge(acc[f] + b, f, &best, &won);
            const int64_t at = (i * wo + j) * c;
            store(y + at, activate(best, leaky, slope), lanes);
            store_code(code + at, won, lanes);
        }
    }
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
    /* Image by image, so each image's input stays in L1 across the channel blocks. */
    for (int64_t n = 0; n < n_img; n++) {
        const float *x = xp + n * cin * hp * wp;
        for (int64_t k0 = 0; k0 < c; k0 += LANES) {
            const int64_t lanes = c - k0 < LANES ? c - k0 : LANES;
            float *yn = y + n * ho * wo * c + k0;
            uint8_t *cn = code + n * ho * wo * c + k0;
            const vf b = load(bias + k0, lanes);
            if (cin == 1 && lanes == LANES) {
                /* conv1 itself: a local array of 9 weights, which the compiler keeps in
                   registers once the taps are unrolled. */
                vf w9[9];
                for (int t = 0; t < 9; t++) w9[t] = load(wt + t * c + k0, LANES);
                conv_pool_image(x, 1, hp, wp, ho, wo, w9, b, c, LANES, leaky, slope, yn, cn);
            } else {
                for (int64_t t = 0; t < taps; t++) weights[t] = load(wt + t * c + k0, lanes);
                conv_pool_image(x, cin, hp, wp, ho, wo, weights, b, c, lanes, leaky, slope, yn,
                                cn);
            }
        }
    }
}

/* Over one image's positions (i, j) in row-major order, each sum from 0: the weight gradient
   part of the 9 taps of one input channel x, and (if part_b) the bias gradient part. */
INLINE void conv_pool_grad_image(const float *x, int64_t wp, int64_t ho, int64_t wo,
                                 const float *g, const float *y, const uint8_t *code, int64_t c,
                                 int64_t lanes, int leaky, float slope, vf part[9],
                                 vf *part_b) {
    vf acc[9] = {{0}}, acc_b = {0};
    for (int64_t i = 0; i < ho; i++) {
        for (int64_t j = 0; j < wo; j++) {
            const int64_t at = (i * wo + j) * c;
            const float *win = x + 2 * i * wp + 2 * j;
            const vf gp = activation_grad(load(g + at, lanes), load(y + at, lanes), leaky, slope);
            vi won = load_code(code + at, lanes);
            won &= won <= 3; /* any other code means position 0, as in a chain of == tests */
            /* Window column and row of each lane's winning position: two masks, not three. */
            const vi right = (won & 1) != 0, lower = (won & 2) != 0;
            if (part_b) acc_b += gp;
            /* Each lane's input under tap t at its own winning position (a pick is exact). */
            UNROLLED for (int t = 0; t < 9; t++) {
                const vf x0 = (vf){0} + tap(win, wp, 0, t), x1 = (vf){0} + tap(win, wp, 1, t),
                         x2 = (vf){0} + tap(win, wp, 2, t), x3 = (vf){0} + tap(win, wp, 3, t);
                acc[t] += gp * pick(lower, pick(right, x3, x2), pick(right, x1, x0));
            }
        }
    }
    for (int t = 0; t < 9; t++) part[t] = acc[t];
    if (part_b) *part_b = acc_b;
}

/* Weight and bias gradients of histres_conv_pool_forward (the images need none).
   g, y, code: N x H/2 x W/2 x C; dwt: (Cin*9) x C; db: C.
   Sums run over one image's positions in order, then over images in order. Each input
   channel's 9 taps are their own pass over the image, so 9 partial sums (not Cin * 9) are
   live, and they mostly stay in registers. */
void histres_conv_pool_backward(const float *restrict xp, int64_t n_img, int64_t cin,
                                int64_t h, int64_t w, const float *restrict g,
                                const float *restrict y, const uint8_t *restrict code,
                                int64_t c, int leaky, float slope, float *restrict dwt,
                                float *restrict db) {
    const int64_t hp = h + 2, wp = w + 2, ho = h / 2, wo = w / 2, taps = cin * 9;
    memset(dwt, 0, sizeof(float) * (size_t)(taps * c));
    memset(db, 0, sizeof(float) * (size_t)c);
    for (int64_t n = 0; n < n_img; n++) {
        const int64_t at = n * ho * wo * c;
        for (int64_t k0 = 0; k0 < c; k0 += LANES) {
            const int64_t lanes = c - k0 < LANES ? c - k0 : LANES;
            for (int64_t ch = 0; ch < cin; ch++) {
                const float *x = xp + (n * cin + ch) * hp * wp;
                vf part[9], part_b, *pb = ch == 0 ? &part_b : NULL;
                if (lanes == LANES)
                    conv_pool_grad_image(x, wp, ho, wo, g + at + k0, y + at + k0, code + at + k0,
                                         c, LANES, leaky, slope, part, pb);
                else
                    conv_pool_grad_image(x, wp, ho, wo, g + at + k0, y + at + k0, code + at + k0,
                                         c, lanes, leaky, slope, part, pb);
                for (int t = 0; t < 9; t++) {
                    float *d = dwt + (ch * 9 + t) * c + k0;
                    store(d, load(d, lanes) + part[t], lanes);
                }
                if (pb) store(db + k0, load(db + k0, lanes) + part_b, lanes);
            }
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
