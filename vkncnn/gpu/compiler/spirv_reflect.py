"""A small reflection pass over SPIR-V words: what a Pipeline must know about its shader.

ncnn's resolve_shader_info, reduced to what vkncnn needs:
  * the bindings of descriptor set 0: how many, storage vs uniform buffer, and whether
    each is read and/or written (`readonly` / `writeonly` become NonWritable /
    NonReadable decorations): the barrier tracker needs to know which tensors a
    dispatch writes; and the least bytes each block needs (a runtime array counted
    empty), which the shader harness checks a bound buffer against;
  * the push-constant block: its size in bytes and the type of each 32-bit member;
  * the specialization-constant ids and types, and the local size: either fixed in the shader
    (LocalSize execution mode) or taken from spec ids 233/234/235;
  * what the device must offer to run it: the SPIR-V version, the declared capabilities
    (16-bit storage, Float16, subgroup operations, cooperative matrices ...) and the bytes of
    shared (Workgroup) memory, for the limit checks of device_limits.py.

Knowing the types lets the recorder encode Python numbers right: `1` passed for a float
constant must become 1.0f, not the int bit pattern 1 (ncnn's C++ union leaves that to
the caller). A SPIR-V module is a 5-word header, then instructions: word 0 holds (word count << 16)
| opcode, the operands follow.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ...errors import GpuError

MAGIC = 0x07230203

# opcodes
_OP_CAPABILITY, _OP_EXECUTION_MODE, _OP_TYPE_INT, _OP_TYPE_FLOAT, _OP_TYPE_VECTOR = 17, 16, 21, 22, 23
_OP_TYPE_MATRIX, _OP_TYPE_ARRAY, _OP_TYPE_RUNTIME_ARRAY, _OP_TYPE_STRUCT = 24, 28, 29, 30
_OP_TYPE_POINTER, _OP_CONSTANT, _OP_VARIABLE, _OP_DECORATE, _OP_MEMBER_DECORATE = 32, 43, 59, 71, 72
_OP_TYPE_BOOL = 20
_OP_SPEC_CONSTANT_TRUE, _OP_SPEC_CONSTANT_FALSE, _OP_SPEC_CONSTANT = 48, 49, 50
# decorations
_DEC_SPEC_ID, _DEC_BLOCK, _DEC_BUFFER_BLOCK, _DEC_ARRAY_STRIDE = 1, 2, 3, 6
_DEC_NON_WRITABLE, _DEC_NON_READABLE, _DEC_BINDING, _DEC_SET, _DEC_OFFSET = 24, 25, 33, 34, 35
# storage classes
_SC_UNIFORM, _SC_WORKGROUP, _SC_PUSH_CONSTANT, _SC_STORAGE_BUFFER = 2, 4, 9, 12
_EXEC_LOCAL_SIZE = 17

LOCAL_SIZE_SPEC_IDS = (233, 234, 235)


@dataclass
class BindingInfo:
    storage: bool = True    # storage buffer (else uniform buffer)
    reads: bool = True
    writes: bool = True
    min_size: int = 0       # bytes of the block with its runtime array (if any) empty


@dataclass
class ShaderInfo:
    bindings: list = field(default_factory=list)   # BindingInfo per binding index of set 0
    push_constant_size: int = 0
    push_constants: list = field(default_factory=list)  # (byte offset, 'i' / 'u' / 'f') per scalar
    spec_ids: set = field(default_factory=set)
    spec_kinds: dict = field(default_factory=dict)          # spec id -> 'i' / 'u' / 'f'

    local_size: tuple = (1, 1, 1)                   # from the LocalSize execution mode
    local_size_from_spec: bool = False              # spec ids 233..235 override it
    spirv_version: tuple = (1, 0)                   # (major, minor) from the header
    capabilities: set = field(default_factory=set)  # OpCapability operands (SPIR-V enum values)
    shared_memory_size: int = 0                     # bytes of Workgroup variables (fixed-size arrays)

    @property
    def binding_count(self) -> int:
        return len(self.bindings)


def words_of(spirv: bytes) -> tuple:
    if len(spirv) % 4 or len(spirv) < 20:
        raise GpuError(f"not SPIR-V: {len(spirv)} bytes is not a whole number of 32-bit words")
    words = struct.unpack(f"<{len(spirv) // 4}I", spirv)
    if words[0] != MAGIC:
        raise GpuError(f"not SPIR-V: magic number {words[0]:#x}, expected {MAGIC:#x}")
    return words


def reflect(spirv: bytes) -> ShaderInfo:
    words = words_of(spirv)
    decorations: dict[int, dict[int, list]] = {}         # id -> decoration -> operands
    member_decorations: dict[int, dict[int, dict]] = {}  # struct id -> member -> decoration -> operands
    types: dict[int, tuple] = {}                         # type id -> (opcode, operands)
    constants: dict[int, int] = {}
    variables: list[tuple] = []                          # (pointer type id, result id, storage class)
    spec_constants: dict[int, int] = {}                  # result id -> type id
    info = ShaderInfo()
    info.spirv_version = ((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF)

    i = 5
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        if count == 0:
            raise GpuError("malformed SPIR-V: zero-length instruction")
        ops = words[i + 1:i + count]
        if op == _OP_CAPABILITY:
            info.capabilities.add(ops[0])
        elif op == _OP_DECORATE:
            decorations.setdefault(ops[0], {})[ops[1]] = list(ops[2:])
        elif op == _OP_MEMBER_DECORATE:
            member_decorations.setdefault(ops[0], {}).setdefault(ops[1], {})[ops[2]] = list(ops[3:])
        elif op in (_OP_TYPE_BOOL, _OP_TYPE_INT, _OP_TYPE_FLOAT, _OP_TYPE_VECTOR, _OP_TYPE_MATRIX,
                    _OP_TYPE_ARRAY, _OP_TYPE_RUNTIME_ARRAY, _OP_TYPE_STRUCT, _OP_TYPE_POINTER):
            types[ops[0]] = (op, ops[1:])
        elif op == _OP_CONSTANT:
            constants[ops[1]] = ops[2]
        elif op in (_OP_SPEC_CONSTANT, _OP_SPEC_CONSTANT_TRUE, _OP_SPEC_CONSTANT_FALSE):
            spec_constants[ops[1]] = ops[0]
        elif op == _OP_VARIABLE:
            variables.append((ops[0], ops[1], ops[2]))
        elif op == _OP_EXECUTION_MODE and ops[1] == _EXEC_LOCAL_SIZE:
            info.local_size = tuple(ops[2:5])
        i += count

    for target, decs in decorations.items():
        if _DEC_SPEC_ID in decs:
            spec_id = decs[_DEC_SPEC_ID][0]
            info.spec_ids.add(spec_id)
            if target in spec_constants:
                info.spec_kinds[spec_id] = _scalar_kind(spec_constants[target], types)
    info.local_size_from_spec = any(s in info.spec_ids for s in LOCAL_SIZE_SPEC_IDS)

    bindings: dict[int, BindingInfo] = {}
    for ptr_type, var, storage_class in variables:
        pointee = types.get(ptr_type, (0, (0, 0)))[1][1]
        if storage_class == _SC_PUSH_CONSTANT:
            info.push_constant_size = max(info.push_constant_size,
                                          _type_size(pointee, types, constants, decorations, member_decorations))
            info.push_constants = sorted(_scalar_leaves(pointee, 0, types, constants, decorations,
                                                        member_decorations))
            continue
        if storage_class == _SC_WORKGROUP:
            info.shared_memory_size += _type_size(pointee, types, constants, decorations, member_decorations)
            continue
        decs = decorations.get(var, {})
        if _DEC_BINDING not in decs or decs.get(_DEC_SET, [0])[0] != 0:
            continue
        struct_decs = decorations.get(pointee, {})
        storage = storage_class == _SC_STORAGE_BUFFER or _DEC_BUFFER_BLOCK in struct_decs
        if storage_class not in (_SC_UNIFORM, _SC_STORAGE_BUFFER):
            raise GpuError("vkncnn pipelines bind buffers only; the shader declares a binding of storage "
                           f"class {storage_class} (images/samplers are not supported)")
        members = member_decorations.get(pointee, {})
        nonwritable = _DEC_NON_WRITABLE in decs or (members and all(_DEC_NON_WRITABLE in m for m in members.values()))
        nonreadable = _DEC_NON_READABLE in decs or (members and all(_DEC_NON_READABLE in m for m in members.values()))
        bindings[decs[_DEC_BINDING][0]] = BindingInfo(
            storage, reads=not nonreadable, writes=storage and not nonwritable,
            min_size=_type_size(pointee, types, constants, decorations, member_decorations))
    if bindings:
        # unused binding numbers in between still get a (storage buffer) slot, as in ncnn
        info.bindings = [bindings.get(b, BindingInfo(True, False, False)) for b in range(max(bindings) + 1)]
    return info


def _type_size(type_id: int, types, constants, decorations, member_decorations) -> int:
    op, ops = types.get(type_id, (0, ()))
    if op in (_OP_TYPE_INT, _OP_TYPE_FLOAT):
        return ops[0] // 8
    if op == _OP_TYPE_BOOL:
        return 4
    if op in (_OP_TYPE_VECTOR, _OP_TYPE_MATRIX):
        return ops[1] * _type_size(ops[0], types, constants, decorations, member_decorations)
    if op == _OP_TYPE_ARRAY:
        stride = decorations.get(type_id, {}).get(_DEC_ARRAY_STRIDE, [0])[0]
        elem = stride or _type_size(ops[0], types, constants, decorations, member_decorations)
        return elem * constants.get(ops[1], 0)
    if op == _OP_TYPE_STRUCT:
        size = 0
        for m, member_type in enumerate(ops):
            offset = member_decorations.get(type_id, {}).get(m, {}).get(_DEC_OFFSET, [0])[0]
            size = max(size, offset + _type_size(member_type, types, constants, decorations, member_decorations))
        return size
    return 0


def _scalar_kind(type_id: int, types) -> str:
    op, ops = types.get(type_id, (0, ()))
    if op == _OP_TYPE_FLOAT:
        return "f"
    if op == _OP_TYPE_INT:
        return "i" if ops[1] else "u"
    return "i"  # bool


def _scalar_leaves(type_id: int, base: int, types, constants, decorations, member_decorations) -> list:
    """[(byte offset, kind)] of every scalar inside a type (push-constant blocks)."""
    op, ops = types.get(type_id, (0, ()))
    if op in (_OP_TYPE_INT, _OP_TYPE_FLOAT, _OP_TYPE_BOOL):
        return [(base, _scalar_kind(type_id, types))]
    if op in (_OP_TYPE_VECTOR, _OP_TYPE_MATRIX, _OP_TYPE_ARRAY):
        if op == _OP_TYPE_ARRAY:
            count = constants.get(ops[1], 0)
            stride = decorations.get(type_id, {}).get(_DEC_ARRAY_STRIDE, [0])[0]
        else:
            count = ops[1]
            stride = _type_size(ops[0], types, constants, decorations, member_decorations)
        out = []
        for k in range(count):
            out += _scalar_leaves(ops[0], base + k * stride, types, constants, decorations, member_decorations)
        return out
    if op == _OP_TYPE_STRUCT:
        out = []
        for m, member_type in enumerate(ops):
            offset = member_decorations.get(type_id, {}).get(m, {}).get(_DEC_OFFSET, [0])[0]
            out += _scalar_leaves(member_type, base + offset, types, constants, decorations, member_decorations)
        return out
    return []
