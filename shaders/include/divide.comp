#ifndef VKNCNN_DIVIDE_COMP
#define VKNCNN_DIVIDE_COMP

// x / y for any finite nonzero y. Vulkan only bounds the error of a division for
// 2^-126 <= |y| <= 2^126, and GPUs that divide as x * (1 / y) (NVIDIA) flush the
// reciprocal of a larger y to 0: 3e38 / 3e38 came out 0 and inf / 3e38 nan on an H200.
// Scaling both by 1/4 (exact) brings y back into range.
float divide(float x, float y)
{
    return abs(y) > 8.5e37 ? (x * 0.25f) / (y * 0.25f) : x / y;
}

#endif
