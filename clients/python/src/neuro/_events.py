"""The compact form of an event sample."""

import base64
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
