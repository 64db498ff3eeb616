"""The compact forms of an event sample."""

import base64
import operator
import struct
from typing import Any, Dict, Iterable


def pack_events(events: Iterable[Any], timesteps: int) -> Dict[str, Any]:
    """Returns an event sample in compact form: ``{"events_packed": ...,
    "timesteps": T}``, the events as little-endian int32 pairs (t, i) in
    base64. It is about a quarter of the JSON's size, and the server reads
    it at memory speed; use it for large batches of spikes.

    ``events`` holds ``(t, i)`` pairs: a list, or a numpy array of shape
    (n, 2). Steps and inputs must fit in an int32.
    """
    if hasattr(events, "astype") and hasattr(events, "tobytes"):  # numpy
        arr = events.astype("<i4", copy=False)
        if arr.size and (arr.ndim != 2 or arr.shape[1] != 2):
            raise ValueError("pack_events: events must have shape (n, 2), not %s" % (arr.shape,))
        raw = arr.tobytes()
    else:
        flat = []
        for k, ev in enumerate(events):
            t, i = ev  # raises on anything but a pair
            flat.extend((int(t), int(i)))
        try:
            raw = struct.pack("<%di" % len(flat), *flat)
        except struct.error as e:
            raise ValueError("pack_events: a step or input does not fit in an int32: %s" % e) from None
    return {"events_packed": base64.b64encode(raw).decode("ascii"), "timesteps": int(timesteps)}


def pack_raster(events: Iterable[Any], timesteps: int, inputs: int) -> Dict[str, Any]:
    """Returns an event sample as a raster of bits: ``{"raster": ...,
    "timesteps": T}``, a row of the network's ``inputs`` inputs per step,
    input i firing at step t where bit ``t * inputs + i`` is set, least
    significant bit of each byte first (numpy's ``packbits(spikes,
    bitorder="little")`` of a C-ordered T×n array), in base64. It is
    ⌈T·n/8⌉ bytes whatever the activity: smaller than :func:`pack_events`
    where more than about one input in 64 fires, as with rate-coded images.

    ``events`` holds ``(t, i)`` pairs, a list or a numpy array of shape
    (n, 2); each must lie within ``0 <= t < timesteps`` and ``0 <= i <
    inputs``, else ValueError before anything is sent.
    """
    timesteps, inputs = operator.index(timesteps), operator.index(inputs)
    if timesteps < 1 or inputs < 1:
        raise ValueError("pack_raster: a raster of %d timesteps of %d inputs" % (timesteps, inputs))
    bits = bytearray((timesteps * inputs + 7) // 8)
    for k, ev in enumerate(events):
        try:
            t, i = (operator.index(v) for v in ev)
        except (TypeError, ValueError):
            raise ValueError("pack_raster: event %d, %r, is not a pair of whole numbers (t, i)" % (k, ev)) from None
        if not (0 <= t < timesteps and 0 <= i < inputs):
            raise ValueError(
                "pack_raster: event %d, [%d, %d], is outside %d timesteps of %d inputs" % (k, t, i, timesteps, inputs)
            )
        bit = t * inputs + i
        bits[bit >> 3] |= 1 << (bit & 7)
    return {"raster": base64.b64encode(bytes(bits)).decode("ascii"), "timesteps": timesteps}
