"""The macro block spliced right after `#version 450` in every shader (ncnn's shader preamble).

Shaders are written once against abstract types and helpers; the preamble decides what they
mean for one storage/arithmetic precision:

    storage (what buffers hold)     sfp, sfpvec2, sfpvec4       float / vec*, or float16_t / f16vec*
    arithmetic (what math uses)     afp, afpvec2, afpvec4       float / vec*, or float16_t / f16vec*
    local (shared-memory) type      lfp, lfpvec2, lfpvec4       fp16 only with fp16 storage *and* fp16
                                    arithmetic (GLSL needs the arithmetic
                                    extension for 16-bit `shared`), else fp32
    conversions                     sfp2afp(v), afp2sfp(v), sfp2afpvec4(v), afp2sfpvec4(v),
                                    lfp2afp(v), afp2lfp(v), lfp2afpvec4(v), afp2lfpvec4(v)
    buffer access                   buffer_ld1(buf,i)          -> afp        buf[i] converted
                                    buffer_st1(buf,i,v)        buf[i] = v converted to sfp
                                    buffer_cp1(buf,i,sbuf,si)  buf[i] = sbuf[si], no conversion
                                    buffer_ld2/st2/cp2         the same for vec2 items
                                    buffer_ld4/st4/cp4         the same for vec4 items
                                    buffer_cp1to4(buf,i,sbuf,si4)  gather 4 scalars (ivec4 si4) into one vec4
                                    buffer_cp4to1(buf,i4,sbuf,si)  scatter one vec4 into 4 scalars (ivec4 i4)
                                    buffer_sm1/sm4(sm,si,buf,i)    storage buffer -> shared memory (lfp)
    psc(x)                          (x == 0 ? p.x : x): the specialization constant x when the
                                    pipeline knew the value, else the push constant p.x
    feature flags                   NCNN_fp16_storage, NCNN_fp16_arithmetic (defined when on),
                                    ncnn_glsl_version 1

fp16 storage needs GL_EXT_shader_16bit_storage; fp16 arithmetic additionally needs
GL_EXT_shader_explicit_arithmetic_types_float16. Those #extension lines open the block so that
they directly follow #version, as GLSL wants.

Every built-in shader gets the same preamble for a given (fp16_storage, fp16_arithmetic), with
no device-specific macros: that is what lets their SPIR-V ship precompiled. Device facts
(e.g. a subgroup size) go in as specialization constants or explicit defines instead.
"""

from __future__ import annotations

_EXT_16BIT_STORAGE = "#extension GL_EXT_shader_16bit_storage : require\n"
_EXT_FP16_ARITHMETIC = "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n"

_FP32 = {"": "float", "vec2": "vec2", "vec4": "vec4"}
_FP16 = {"": "float16_t", "vec2": "f16vec2", "vec4": "f16vec4"}


def make_preamble(fp16_storage: bool = False, fp16_arithmetic: bool = False) -> str:
    """The block for one precision choice: #extension lines first, then the macros."""
    storage = _FP16 if fp16_storage else _FP32
    arith = _FP16 if fp16_arithmetic else _FP32
    # 16-bit `shared` variables need the fp16 arithmetic extension, not just 16-bit storage.
    local = _FP16 if fp16_storage and fp16_arithmetic else _FP32
    lines: list[str] = []
    if fp16_storage:
        lines.append(_EXT_16BIT_STORAGE.rstrip())
    if fp16_arithmetic:
        lines.append(_EXT_FP16_ARITHMETIC.rstrip())
    if fp16_storage:
        lines.append("#define NCNN_fp16_storage 1")
    if fp16_arithmetic:
        lines.append("#define NCNN_fp16_arithmetic 1")
    lines.append("#define ncnn_glsl_version 1")

    for suffix in ("", "vec2", "vec4"):
        lines.append(f"#define sfp{suffix} {storage[suffix]}")
        lines.append(f"#define afp{suffix} {arith[suffix]}")
        lines.append(f"#define lfp{suffix} {local[suffix]}")
    for suffix in ("", "vec2", "vec4"):
        s, a, lo = storage[suffix], arith[suffix], local[suffix]
        lines.append(f"#define sfp2afp{suffix}(v) {a}(v)")
        lines.append(f"#define afp2sfp{suffix}(v) {s}(v)")
        lines.append(f"#define lfp2afp{suffix}(v) {a}(v)")
        lines.append(f"#define afp2lfp{suffix}(v) {lo}(v)")

    # Loads convert to the arithmetic type, stores to the storage type; copies move raw items.
    for n, suffix in (("1", ""), ("2", "vec2"), ("4", "vec4")):
        s, a = storage[suffix], arith[suffix]
        lines.append(f"#define buffer_ld{n}(buf,i) {a}(buf[i])")
        lines.append(f"#define buffer_st{n}(buf,i,v) {{buf[i]={s}(v);}}")
        lines.append(f"#define buffer_cp{n}(buf,i,sbuf,si) {{buf[i]=sbuf[si];}}")
    # Gather/scatter go through the arithmetic type: building an f16vec4 from four float16_t
    # scalars (or taking one apart) is arithmetic as far as GLSL is concerned.
    s4, a1, s1 = storage["vec4"], arith[""], storage[""]
    gathered = ",".join(f"{a1}(sbuf[(si4).{c}])" for c in "rgba")
    lines.append(f"#define buffer_cp1to4(buf,i,sbuf,si4) {{buf[i]={s4}({arith['vec4']}({gathered}));}}")
    scattered = "".join(f"buf[(i4).{c}]={s1}(_cp4to1_v.{c});" for c in "rgba")
    v4 = arith["vec4"]
    lines.append(f"#define buffer_cp4to1(buf,i4,sbuf,si) {{{v4} _cp4to1_v={v4}(sbuf[si]);{scattered}}}")
    lines.append(f"#define buffer_sm1(sm,si,buf,i) {{sm[si]={local['']}(buf[i]);}}")
    lines.append(f"#define buffer_sm4(sm,si,buf,i) {{sm[si]={local['vec4']}(buf[i]);}}")
    lines.append("#define psc(x) (x==0?p.x:x)")
    return "\n".join(lines) + "\n"
