"""How much of PyTorch's caching-allocator pool bitsandbytes 0.41's 4-bit load leaves unused (the holes: reserved less
allocated), for ms-swift's Qwen 7B / 14B / 72B rows (app/estimator/memory/activations.py BNB_FP16_DEQUANT_POOL_COPIES).

Run: .venv/bin/python benchmarks/bnb_load_pool.py

The load, as transformers 4.36 runs it under a BitsAndBytesConfig: tensors in the checkpoint's order (safetensors
sorts names, so a layer's c_attn bias and weight, attn c_proj, ln_1, ln_2, mlp c_proj, w1, w2), each quantised weight
moved to the card as an fp16 copy (bitsandbytes nn/modules.py at b5800d35, Params4bit.cuda
`self.data.contiguous().half().cuda(device)`), then `quantize_4bit` (functional.py) allocates the fp32 absmax and the
packed uint8 out, and with double quantisation the absmax's mean, its 8-bit code and second-level absmax, freeing the
fp32 absmax; the fp16 copy is freed last. The other tensors go to the card in bf16. The GPTQ line reads the packed
weights from the checkpoint instead (no fp16 copy).

The allocator, as c10/cuda/CUDACachingAllocator.cpp (torch 2.1) has it: sizes rounded to 512 bytes; requests up to
1 MiB from the small pool (2 MiB segments), larger ones from the large pool (20 MiB segments below 10 MiB, else the
size rounded to 2 MiB); best fit among cached blocks (`get_free_block`); a block split where more than 1 MiB (large)
or 512 bytes (small) is left (`should_split`); freed blocks merged with free neighbours of the same segment only.
"""

from __future__ import annotations

import bisect
import itertools

MIB = 1 << 20
GIB = 1 << 30
_Handle = tuple[str, int, int]


def _round(n: int) -> int:
    return 512 if n < 512 else (n + 511) // 512 * 512


def _segment(n: int) -> int:
    if n <= MIB:
        return 2 * MIB
    if n < 10 * MIB:
        return 20 * MIB
    return (n + 2 * MIB - 1) // (2 * MIB) * (2 * MIB)


class Allocator:
    def __init__(self) -> None:
        self.free: dict[str, list[tuple[int, int, int]]] = {"small": [], "large": []}  # (size, segment, offset)
        self.blocks: dict[int, dict[int, list[int | bool]]] = {}  # segment -> offset -> [size, free]
        self.ids = itertools.count()
        self.reserved = 0
        self.allocated = 0

    def malloc(self, n: int) -> _Handle:
        n = _round(n)
        pool = "small" if n <= MIB else "large"
        cached = self.free[pool]
        i = bisect.bisect_left(cached, (n, -1, -1))
        if i < len(cached):
            size, seg, start = cached.pop(i)
        else:
            size, seg, start = _segment(n), next(self.ids), 0
            self.reserved += size
            self.blocks[seg] = {}
        rest = size - n
        if (pool == "large" and rest > MIB) or (pool == "small" and rest >= 512):
            bisect.insort(cached, (rest, seg, start + n))
            self.blocks[seg][start + n] = [rest, True]
            size = n
        self.blocks[seg][start] = [size, False]
        self.allocated += size
        return pool, seg, start

    def release(self, handle: _Handle) -> None:
        pool, seg, start = handle
        blocks, cached = self.blocks[seg], self.free[pool]
        size = int(blocks[start][0])
        self.allocated -= size
        offsets = sorted(blocks)
        i = offsets.index(start)
        if i + 1 < len(offsets) and blocks[offsets[i + 1]][1]:
            after = offsets[i + 1]
            cached.remove((int(blocks[after][0]), seg, after))
            size += int(blocks.pop(after)[0])
        if i > 0 and blocks[offsets[i - 1]][1] and offsets[i - 1] + int(blocks[offsets[i - 1]][0]) == start:
            before = offsets[i - 1]
            cached.remove((int(blocks[before][0]), seg, before))
            size += int(blocks[before][0])
            del blocks[start]
            start = before
        blocks[start] = [size, True]
        bisect.insort(cached, (size, seg, start))


def _quantise(a: Allocator, n: int, keep: list[_Handle]) -> None:
    """bitsandbytes 0.41 Params4bit.cuda with double quantisation (blocks of 64, second level of 256)."""
    fp16 = a.malloc(2 * n)
    blocks = (n + 63) // 64
    absmax = a.malloc(4 * blocks)
    keep.append(a.malloc((n + 1) // 2))
    keep.append(a.malloc(4))  # absmax.mean()
    keep.append(a.malloc(4 * ((blocks + 255) // 256)))
    keep.append(a.malloc(blocks))
    a.release(absmax)
    a.release(fp16)


def load(hidden: int, mlp_width: int, layers: int, vocab: int, *, bnb: bool) -> Allocator:
    """Qwen (v1) remote code's tensors in checkpoint order: (numel, quantised) per layer, embedding first, head last."""
    a, keep = Allocator(), []
    layer = (
        (3 * hidden, False),
        (3 * hidden * hidden, True),
        (hidden * hidden, True),
        (hidden, False),
        (hidden, False),
        (mlp_width * hidden, True),
        (mlp_width * hidden, True),
        (mlp_width * hidden, True),
    )
    keep.append(a.malloc(2 * vocab * hidden))
    for _ in range(layers):
        for n, quantised in layer:
            if quantised and bnb:
                _quantise(a, n, keep)
            elif quantised:
                keep += [a.malloc(n // 2), a.malloc(n // 32)]
            else:
                keep.append(a.malloc(2 * n))
    keep += [a.malloc(2 * hidden), a.malloc(2 * vocab * hidden)]
    return a


def main() -> None:
    # Qwen/Qwen-*-Chat config.json: hidden, intermediate_size / 2, layers, vocabulary
    for name, shape in (
        ("qwen-7b", (4096, 11008, 32, 151936)),
        ("qwen-14b", (5120, 13696, 40, 152064)),
        ("qwen-72b", (8192, 24576, 80, 152064)),
    ):
        for bnb in (True, False):
            a = load(*shape, bnb=bnb)
            print(
                f"{name} {'bitsandbytes 0.41' if bnb else 'gptq (packed)   '}: allocated {a.allocated / GIB:6.2f} GiB, "
                f"reserved {a.reserved / GIB:6.2f} GiB, holes {(a.reserved - a.allocated) / GIB:5.2f} GiB"
            )


if __name__ == "__main__":
    main()
