"""RotaryEmbed: rotary position embedding of (heads, seqlen, dim) by cos/sin caches.

GPU: shaders/rotaryembed.comp, one invocation per output scalar; x and the caches may
each arrive pack1 or pack4, the output keeps x's packing.
"""

from vkncnn.cpu_fallback import llm
from vkncnn.errors import ShapeError
from vkncnn.gpu.ops import row_reduction as rows
from vkncnn.gpu.vulkan.pipeline import shader_pipeline
from vkncnn.gpu.vulkan.vkmat import VkMat, use_fp16_storage
from vkncnn.layer import Layer, register_layer


@register_layer("RotaryEmbed")
class RotaryEmbed(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.support_vulkan_any_packing = True  # the shader reads either elempack

    def load_param(self, pd) -> int:
        self.interleaved = pd.get(0, 0)
        return 0

    def forward_cpu(self, bottoms, opt):
        if len(bottoms) != 3:
            raise ShapeError(f"RotaryEmbed takes x, cos and sin: 3 inputs, got {len(bottoms)}")
        x, cos, sin = bottoms
        if x.ndim < 2 or cos.ndim < 2 or cos.shape != sin.shape or cos.shape[-2] != x.shape[-2]:
            raise ShapeError(f"cos/sin caches {cos.shape}/{sin.shape} do not match input {x.shape} "
                             "(expected (seqlen, dim/2) or (seqlen, dim))")
        if cos.ndim > x.ndim or cos.shape[-1] < x.shape[-1] // 2:
            raise ShapeError(f"cos/sin caches {cos.shape} hold fewer than dim/2 = {x.shape[-1] // 2} angles "
                             f"per position, or more dims than the input {x.shape}")
        try:
            return [llm.rotary_embed(x, cos, sin, bool(self.interleaved))]
        except ValueError as e:  # leading dims that do not broadcast against the heads
            raise ShapeError(f"cos/sin caches {cos.shape} do not broadcast against input {x.shape}: {e}") from None

    # -- GPU ----------------------------------------------------------------------------
    def create_pipeline(self, opt) -> int:
        if self.vkdev is None:
            return 0

        self.pipeline = shader_pipeline(self.vkdev, "rotaryembed", use_fp16_storage(opt, self.vkdev),
                                        [1 if self.interleaved else 0], (rows.FLAT_LOCAL, 1, 1))
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        if len(bottoms) != 3:
            raise ShapeError(f"RotaryEmbed takes x, cos and sin: 3 inputs, got {len(bottoms)}")
        x, cos, sin = bottoms
        xs, cs = x.numpy_shape(), cos.numpy_shape()
        if (cs != sin.numpy_shape() or cos.elempack != sin.elempack or len(xs) < 2 or len(cs) < 2
                or len(cs) > len(xs) or cs[-2] != xs[-2]
                or any(c not in (1, n) for c, n in zip(cs[:-2], xs[len(xs) - len(cs):-2]))):
            raise ShapeError(f"cos/sin caches {cs}/{sin.numpy_shape()} do not match input {xs} "
                             "(expected (seqlen, dim/2) or (seqlen, dim))")
        if cs[-1] < xs[-1] // 2:
            raise ShapeError(f"cos/sin caches {cs} are narrower than dim/2 of input {xs}")
        top = VkMat.create_like(x, cmd.blob_allocator(opt))
        total = top.total() * top.elempack
        xpad = rows.padded_shape(x)
        cpad = rows.padded_shape(cos)
        cmd.record_pipeline(self.pipeline, [x, cos, sin, top],
                            [total, *xpad, len(xs), x.elempack, *cpad, len(cs), cos.elempack],
                            rows.flat_dispatch(total))
        return [top]
