"""A profile as Chrome trace events: open the file in chrome://tracing or ui.perfetto.dev.

One "X" (complete) event per timed inference, and inside it one per layer, with its
position, type, output shapes and where it ran in `args`. Times are microseconds from
the first timed inference's start. On the numpy path the layers sit on the inference's
own track, at the times they really started. GPU times are device timestamps without a
host start: they get a track of their own ("GPU"), laid end to end from each inference's
start, each layer holding one event per shader dispatch.
"""

from __future__ import annotations

from .layer_profile import Profile

PID = 1
HOST_TID = 1
GPU_TID = 2


def _meta(name: str, tid: int, value: str) -> dict:
    return {"name": name, "ph": "M", "pid": PID, "tid": tid, "args": {"name": value}}


def trace_events(profile: Profile) -> dict:
    """{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}"""
    gpu = profile.path == "gpu"
    layer_tid = GPU_TID if gpu else HOST_TID
    events = [_meta("process_name", HOST_TID, f"vkncnn profile {profile.model}"),
              _meta("thread_name", HOST_TID, "inference (host, wall clock)")]
    if gpu:
        events.append(_meta("thread_name", GPU_TID, f"GPU: {profile.device} (device timestamps)"))
    for run, (start, dur) in enumerate(zip(profile.run_starts_us, profile.run_us)):
        events.append({"name": f"inference {run + 1}", "cat": "inference", "ph": "X", "ts": start, "dur": dur,
                       "pid": PID, "tid": HOST_TID, "args": {"model": profile.model, "device": profile.device}})
        for order, layer in enumerate(profile.layers):
            ts = start + layer.starts_us[run]
            events.append({"name": layer.label(), "cat": layer.runs_on, "ph": "X", "ts": ts,
                           "dur": layer.times_us[run], "pid": PID, "tid": layer_tid,
                           "args": {"order": order, "param_index": layer.index, "type": layer.type,
                                    "name": layer.name, "shapes": layer.shapes, "runs_on": layer.runs_on,
                                    **({"fused_into": layer.fused_into} if layer.fused_into else {})}})
            for shader, times in layer.dispatches.items():  # GPU: the layer's dispatches, in order
                events.append({"name": shader or layer.label(), "cat": "dispatch", "ph": "X", "ts": ts,
                               "dur": times[run], "pid": PID, "tid": layer_tid,
                               "args": {"layer": layer.name}})
                ts += times[run]
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"model": profile.model, "device": profile.device, "path": profile.path,
                          "precision": profile.precision, "clock": profile.clock, "date": profile.date}}
