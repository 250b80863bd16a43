"""Hypothesis strategies for untrusted bytes: raw junk, and msgpack that decodes.

Random bytes rarely decode as msgpack at all, so a decoder's checks past the
first would go untested; ``junk(fields)`` also packs random maps whose keys are
mostly the ones the decoder looks for, with values of every msgpack type.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgpack
from hypothesis import strategies as st

_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1),
                  st.floats(allow_nan=False), st.text(max_size=12), st.binary(max_size=40))


def values() -> st.SearchStrategy[object]:
    """Any msgpack value: scalars, lists and maps, a few levels deep."""
    return st.recursive(_LEAF, lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=6), inner, max_size=4)), max_leaves=12)


def junk(fields: Sequence[str] = ()) -> st.SearchStrategy[bytes]:
    """Bytes a peer might send: random, or a packed map with (mostly) these keys."""
    keys = st.sampled_from(list(fields)) | st.text(max_size=6) if fields else st.text(max_size=6)
    maps = st.dictionaries(keys, values(), max_size=len(fields) + 2).map(
        lambda m: msgpack.packb(m, use_bin_type=True))
    return st.binary(max_size=300) | maps | values().map(
        lambda v: msgpack.packb(v, use_bin_type=True))
