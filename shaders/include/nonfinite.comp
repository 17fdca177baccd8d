// NaN and infinity as the numpy reference treats them (docs/semantics.md).
//
// GLSL's min, max and clamp may return either operand when one of them is NaN, and GPUs
// (lavapipe, NVIDIA) return the other one: a NaN would vanish from a max pooling window, a
// ReLU or a Clip. numpy's maximum, minimum and clip return NaN there; the *_nan forms below
// do the same. The tests use isnan(), which SPIR-V has as an instruction of its own
// (OpIsNan): compilers keep it, where they may fold `x != x` away.
//
// A specialization constant is a plain constant to the driver's compiler, and compilers
// fold x * 0 into 0 (lavapipe does): IEEE and numpy make it NaN for x = NaN or +-inf.
// mul_spec(x, c) keeps that; the test on c folds away when the pipeline is built, so it
// costs nothing where c != 0.
//
// Every helper takes float / vec4; with fp16 arithmetic (NCNN_fp16_arithmetic) the same
// helpers also take float16_t / f16vec4, so that afp code calls them either way.

float nan_value() { return uintBitsToFloat(0x7fc00000u); }
float inf_value() { return uintBitsToFloat(0x7f800000u); }

// NaN or +-inf, tested on the bits (integer work no floating-point assumption can remove)
bool is_nonfinite(float x) { return (floatBitsToUint(x) & 0x7f800000u) == 0x7f800000u; }
bvec4 is_nonfinite(vec4 x) { return equal(floatBitsToUint(x) & uvec4(0x7f800000u), uvec4(0x7f800000u)); }
bool is_pos_inf(float x) { return floatBitsToUint(x) == 0x7f800000u; }

float max_nan(float a, float b) { return isnan(a) ? a : isnan(b) ? b : max(a, b); }
float min_nan(float a, float b) { return isnan(a) ? a : isnan(b) ? b : min(a, b); }
vec4 max_nan(vec4 a, vec4 b) { return mix(mix(max(a, b), b, isnan(b)), a, isnan(a)); }
vec4 min_nan(vec4 a, vec4 b) { return mix(mix(min(a, b), b, isnan(b)), a, isnan(a)); }

// numpy's clip: min(max(x, lo), hi) (hi wins when lo > hi), NaN stays NaN
float clip_nan(float x, float lo, float hi) { return isnan(x) ? x : min(max(x, lo), hi); }
vec4 clip_nan(vec4 x, vec4 lo, vec4 hi) { return mix(min(max(x, lo), hi), x, isnan(x)); }

// x * c for a specialization constant c
float mul_spec(float x, const float c) { return (c == 0.f && is_nonfinite(x)) ? nan_value() : x * c; }
vec4 mul_spec(vec4 x, const float c)
{
    return c == 0.f ? mix(x * c, vec4(nan_value()), is_nonfinite(x)) : x * c;
}

#if NCNN_fp16_arithmetic
// the fp16 forms: a conversion to fp32 keeps nan and +-inf, so the bit tests reuse the above
bool is_nonfinite(float16_t x) { return is_nonfinite(float(x)); }
bvec4 is_nonfinite(f16vec4 x) { return is_nonfinite(vec4(x)); }

float16_t max_nan(float16_t a, float16_t b) { return isnan(a) ? a : isnan(b) ? b : max(a, b); }
float16_t min_nan(float16_t a, float16_t b) { return isnan(a) ? a : isnan(b) ? b : min(a, b); }
f16vec4 max_nan(f16vec4 a, f16vec4 b) { return mix(mix(max(a, b), b, isnan(b)), a, isnan(a)); }
f16vec4 min_nan(f16vec4 a, f16vec4 b) { return mix(mix(min(a, b), b, isnan(b)), a, isnan(a)); }

float16_t clip_nan(float16_t x, float16_t lo, float16_t hi) { return isnan(x) ? x : min(max(x, lo), hi); }
f16vec4 clip_nan(f16vec4 x, f16vec4 lo, f16vec4 hi) { return mix(min(max(x, lo), hi), x, isnan(x)); }

// c rounds to fp16 (a constant beyond 65504 becomes +-inf, as the value it scales would)
float16_t mul_spec(float16_t x, const float c)
{
    return (c == 0.f && is_nonfinite(x)) ? float16_t(nan_value()) : x * float16_t(c);
}
f16vec4 mul_spec(f16vec4 x, const float c)
{
    return c == 0.f ? mix(x * float16_t(c), f16vec4(nan_value()), is_nonfinite(x)) : x * float16_t(c);
}
#endif
