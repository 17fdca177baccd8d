"""GLSL to SPIR-V: the glslang binding, the shader registry and its variants, source
assembly (includes, preamble), SPIR-V reflection and the on-disk SPIR-V cache."""
