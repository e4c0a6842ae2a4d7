"""The terms the memory estimate adds up, one function each, with its formula and where the formula comes from.

All sizes are bytes. ``Setup`` is one checked plan (studio/memory/estimator.py builds it); every term reads the
model's card (its counts come from the skeleton on the meta device when the model is on disk) and the setup.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..config.vocabulary import TORCH_ADAMW, canonical_optimizer, optimizer_state_bytes
from .cards import ArchCard

GB = 1024 ** 3
# GPU-side constants are typical values (CUDA 12, Hopper/Ada), not measured by this project yet.
CUDA_CONTEXT_GB = 0.6        # CUDA context + cuBLAS/cuDNN workspaces, outside torch's allocator
FRAGMENTATION = 0.10         # caching allocator: reserved exceeds allocated by ~10% of the churn
# CPU-side constants are measured by bench/memory_bench.py (torch 2.13 CPU wheel, glibc malloc).
CPU_BASELINE_GB = 0.48       # VmRSS after importing python + torch + transformers + peft (0.38), plus the
                             # kernels and thread pools the first training step pages in (~0.10)
# glibc keeps freed activation / activation-gradient buffers fragmented, so peak RSS exceeds the live
# tensors by a factor on the dynamic part; peft's adapter path (extra per-module temporaries in forward
# and backward) churns more. Fitted on the --quick model at seq 128 and 512, checked at seq 256 and on
# the default model (see the bench's table).
CPU_ALLOC_FACTOR = 1.45
CPU_ALLOC_FACTOR_ADAPTER = 2.5   # on layer activations; logits keep CPU_ALLOC_FACTOR
CUDA_HOST_BASELINE_GB = 2.5  # host RSS of a CUDA torch process (driver + kernels mapped)
ZERO_HOST_BUFFERS = 1.1      # pinned staging buffers on top of DeepSpeed's offloaded states
# z3-nvme keeps in host RAM only the swap buffers of presets/deepspeed/ds_z3_nvme.json: offload_param
# buffer_count 5 x buffer_size 1e8 x 2 bytes, and offload_optimizer buffer_count 4 x sub_group_size 1e8 x
# 16 bytes (fp32 master + grad + 2 Adam states of one sub-group)
NVME_HOST_BUFFERS = 5 * 1e8 * 2 + 4 * 1e8 * 16


@dataclass(frozen=True)
class Setup:
    """One checked plan, with what follows from it (see estimator.estimate for the arguments)."""

    method: str
    quant_bits: int | None
    ds: str                 # DeepSpeed plan ("none" on CPU)
    precision: str          # fp32 / bf16 / fp16 / pure_bf16 (auto resolved)
    tokens: int             # seq_len x batch
    grad_ckpt: bool
    layerwise: bool         # layer-wise offload (never with DeepSpeed)
    device: str
    optim: str
    lora_rank: int
    lora_target: str
    freeze_layers: int
    double_quant: bool
    chunked_loss: bool
    offload_act: bool = False  # checkpointed layers' inputs kept in pinned host RAM (only with grad_ckpt, on a card)

    @property
    def adapter(self) -> bool:
        return self.quant_bits is not None or self.method in ("lora", "qlora")

    @property
    def b(self) -> int:
        """Bytes of frozen weights and of activations: 4 in fp32, else 2."""
        return 4 if self.precision == "fp32" else 2

    @property
    def mixed(self) -> bool:
        """Autocast over fp32 master weights."""
        return self.precision in ("bf16", "fp16")

    @property
    def tb(self) -> int:
        """Bytes of each trained parameter, of its gradient and the unit of its optimizer states.

        Adapters are fp32 (peft's autocast_adapter_dtype); full/freeze keep fp32 masters under mixed precision,
        bf16 under pure_bf16; DeepSpeed holds its own fp32 master (``placement``) over 16-bit module weights."""
        if self.adapter:
            return 4
        return self.b if self.ds != "none" or self.precision == "pure_bf16" else 4


def lora_params(card: ArchCard, rank: int, target: str) -> tuple[float, float]:
    """(adapter params, bytes-per-token of module inputs a 16-bit LoRA copies) for one layer.

    Formula: rank x (in + out) per adapted nn.Linear (peft's LoRA A and B). ``all`` is peft's all-linear: every
    nn.Linear / Conv1D of the block (fused MoE experts are not modules, so they get no adapter)."""
    linears = card.linear_counts()
    if target.strip() in ("all", "", "all-linear"):
        picked = linears
    else:
        names = [t.strip() for t in target.split(",") if t.strip()]
        have = {n for n, *_ in linears}
        # Phi-3's fused names, on a card that lists q/k/v and gate/up apart
        fused = {"qkv_proj": ["q_proj", "k_proj", "v_proj"], "gate_up_proj": ["gate_proj", "up_proj"]}
        wanted = {m for n in names for m in ([n] if n in have else fused.get(n, [n]))}
        picked = [x for x in linears if x[0] in wanted]
    return sum(rank * (a + b) * c for _n, a, b, c in picked), sum(a * c for _n, a, _b, c in picked)


def trainable_params(card: ArchCard, s: Setup) -> float:
    """Parameters the optimizer updates: all (full), the top ``freeze_layers`` layers (freeze), or the adapters."""
    if s.method == "full" and not s.adapter:
        return card.n_params
    if s.method == "freeze":
        return min(s.freeze_layers, card.num_layers) * card.layer_params
    return lora_params(card, s.lora_rank, s.lora_target)[0] * card.num_layers if s.adapter else 0


def weights(card: ArchCard, s: Setup) -> float:
    """Bytes of all weights as the engine holds them.

    QLoRA: nn.Linear weights of the blocks at quant_bits/8 bytes plus their quantization constants (bitsandbytes
    NF4: one fp32 absmax per 64 weights = 0.0625 B, 0.0159 B with double quantization; LLM.int8: one fp32 scale per
    row ~0.0078 B), everything else in fp32 because peft's ``prepare_model_for_kbit_training`` casts it up (that
    includes transformers 5's fused MoE experts, which bitsandbytes does not quantize), plus fp32 adapters.
    Otherwise: frozen weights at ``b`` bytes, trained ones at ``tb`` (studio/models/precision.py)."""
    n_all, trainable = card.n_params, trainable_params(card, s)
    if s.adapter:
        if s.quant_bits:
            q = s.quant_bits
            per = q / 8 + (0.0159 if s.double_quant else 0.0625) * (q == 4) + 0.0078 * (q == 8)
            qlin = card.num_layers * card.layer_linear_params
            frozen = qlin * per + (n_all - qlin) * 4
        else:
            frozen = n_all * s.b
        return frozen + trainable * 4
    return (n_all - trainable) * s.b + trainable * s.tb


def gradients(card: ArchCard, s: Setup) -> float:
    """Bytes of gradients: one per trained parameter, in its dtype (``tb``). Frozen weights get none."""
    return trainable_params(card, s) * s.tb


def optimizer_states(card: ArchCard, s: Setup) -> float:
    """Bytes of optimizer state: trained parameters x the optimizer's state bytes (studio/config/vocabulary.py:
    AdamW 2 states of ``tb`` bytes, 8-bit AdamW 2 bytes, paged as its base, factored ~0.1, SGD 0)."""
    return trainable_params(card, s) * optimizer_state_bytes(s.optim, s.tb)


def autocast_copies(card: ArchCard, s: Setup) -> float:
    """Bytes of the 16-bit copies autocast makes of each fp32 trained weight in forward; autograd keeps each one
    for backward (torch.autocast caches casts within the forward). Only full/freeze under mixed precision."""
    return trainable_params(card, s) * 2 if s.mixed and not s.adapter and s.ds == "none" else 0.0


def step_temporaries(card: ArchCard, s: Setup) -> float:
    """Bytes the optimizer step allocates on top of its states.

    On CUDA the engine picks torch's fused AdamW (studio/engine/arguments.py ``_optimizer``), which updates in
    place, with layer-wise offload too too (the fused kernel groups the host and card
    parameters by device; the unfused one fell back to a per-tensor loop). On CPU it loops per tensor: two
    temporaries of the largest trainable tensor. DeepSpeed: none here (its step runs on its own partitions)."""
    torch_adamw = canonical_optimizer(s.optim) in TORCH_ADAMW
    if not torch_adamw or s.ds != "none":
        return 0.0
    if s.device == "cuda":
        return 0.0
    h, i = card.hidden_size, card.intermediate_size
    largest = max(card.embed_params, h * i) if s.method == "full" and not s.adapter else (
        h * i if s.method == "freeze" else 0)
    return 2 * s.tb * largest


def layer_activation_bytes_per_token(card: ArchCard, s: Setup) -> float:
    """Bytes autograd saves per token in one decoder layer (HF Llama block, SDPA attention: no seq^2 term).

    Formula: two RMSNorms (fp32 input 4h, the 16-bit output b*h, the weight-cast input for full training b*h), q/k/v
    and the attention output b*(3q + 2kv), the softmax log-sum-exp 4 x heads, and the MLP b*4i (gate, up, act,
    product; MoE: the width of the experts a token is routed to, ``card.act_intermediate``). A 16-bit LoRA also
    keeps the fp32 cast of each adapted module's input (peft casts it to the adapter dtype)."""
    b, h = s.b, card.hidden_size
    i, q, kv = card.act_intermediate, card.q_dim, card.kv_dim
    norm = 4 * h + (0 if s.adapter else b * h) + b * h
    per = 2 * norm + b * (3 * q + 2 * kv) + 4 * card.num_heads + 4 * b * i
    if s.adapter and b == 2:
        per += b * lora_params(card, s.lora_rank, s.lora_target)[1]
    return per


def activations(card: ArchCard, s: Setup) -> float:
    """Bytes of saved activations at the peak of backward.

    Without checkpointing every layer that needs gradients keeps its activations (freeze: only the trained top
    layers) plus half a layer of backward temporaries; with gradient checkpointing each layer keeps only its input
    (b x h per token) plus one layer being recomputed and its backward (1.5 layers). Plus the final norm and the
    head's input (4h + 2bh per token)."""
    L, h, b = card.num_layers, card.hidden_size, s.b
    layer = layer_activation_bytes_per_token(card, s) * s.tokens
    if s.grad_ckpt and offloads_activations(s):
        # the L saved inputs live in host RAM (offloaded_activations); the card holds the one being copied back
        # for the layer recomputed now, and the next one's copy in flight
        act = 2 * b * h * s.tokens + 1.5 * layer
    elif s.grad_ckpt:
        act = L * b * h * s.tokens + 1.5 * layer
    else:
        live = L if (s.adapter or s.method == "full") else min(s.freeze_layers, L)
        act = live * layer + 0.5 * layer
    return act + (4 * h + 2 * b * h) * s.tokens


# PCIe 4.0 x16 moves ~25 GB/s each way in practice (32 GB/s on paper); a PCIe 5 card about twice that. The
# estimate uses the slower one: the time is a floor on what offload adds, not a measurement on a card
PCIE_BYTES_PER_S = 25e9


def offloads_activations(s: Setup) -> bool:
    """Activation offload applies to checkpointed activations on a card (on a CPU they are host RAM already)."""
    return s.offload_act and s.grad_ckpt and s.device == "cuda"


def offloaded_activations(card: ArchCard, s: Setup) -> float:
    """Bytes of checkpointed activations held in pinned host RAM by activation offload: each layer's input."""
    return card.num_layers * s.b * card.hidden_size * s.tokens if offloads_activations(s) else 0.0


def activation_pcie_seconds(card: ArchCard, s: Setup) -> float:
    """Seconds a step spends copying offloaded activations: out in forward, back in backward (PCIE_BYTES_PER_S).
    transformers runs both copies on the compute stream, so they add to the step rather than overlap it."""
    return 2 * offloaded_activations(card, s) / PCIE_BYTES_PER_S


LOSS_CHUNK_LOGITS = 2 ** 24  # logits per chunk (64 MiB in fp32): 128 rows of a 128k vocabulary, 4096 of a 4k one


def loss_chunk_rows(vocab_size: int) -> int:
    """Selected positions scored per chunk of the engine's chunked loss (studio/engine/loss.py reads this), so one
    chunk's fp32 logits stay near 64 MiB; the estimator's logits term counts one chunk."""
    return max(16, min(4096, LOSS_CHUNK_LOGITS // max(1, vocab_size)))


def logits(card: ArchCard, s: Setup) -> float:
    """Bytes of the logits and the loss's backward: the loss upcasts to fp32, so ~12 bytes x vocab per position
    (16-bit logits, their fp32 copy, its gradient). The engine's chunked loss (``selective_logits``,
    studio/engine/loss.py) keeps one chunk of positions live at a time."""
    rows = min(s.tokens, loss_chunk_rows(card.vocab_size)) if s.chunked_loss else s.tokens
    return 12 * card.vocab_size * rows


def reference_forward(card: ArchCard, s: Setup, sequences: int, tokens_per_row: int) -> float:
    """Bytes of the forwards without gradients a stage adds (its ``no_grad_sequences`` per row, the stage table
    studio/stages.py): DPO's and KTO's reference, GRPO's generation. The reference is the same weights with the
    adapter switched off (studio/engine/preference.py), so it adds no weights; its forward runs without gradients
    before the policy's, keeping nothing for backward: what it holds at once is one layer's working set and its
    logits in fp32 for the log-probabilities (4 bytes x vocab per position; no chunking: TRL scores every
    completion position). Generation holds less (a KV cache, the last position's logits): counted the same, an
    upper bound."""
    n = sequences * tokens_per_row
    if not n:
        return 0.0
    return n * (4 * card.vocab_size + layer_activation_bytes_per_token(card, s))


def dequant_buffer(card: ArchCard, s: Setup) -> float:
    """QLoRA: one layer's weight dequantized to 16 bits for its matmul (b x h x i)."""
    return s.b * card.hidden_size * card.act_intermediate if s.quant_bits else 0.0


def dynamic(card: ArchCard, s: Setup) -> tuple[float, float]:
    """(activations + logits as the allocator sees them, the allocator's slack on top of them).

    CPU: glibc keeps freed activation buffers fragmented (CPU_ALLOC_FACTOR, measured by bench/memory_bench.py;
    the adapter's extra churn is inside the layers, not in the loss). CUDA: the live tensors; the caching
    allocator's share is in ``overhead``."""
    act, lg = activations(card, s), logits(card, s)
    if s.device != "cpu":
        return act + lg, 0.0
    total = act * (CPU_ALLOC_FACTOR_ADAPTER if s.adapter else CPU_ALLOC_FACTOR) + lg * CPU_ALLOC_FACTOR
    return total, total - (act + lg)


def overhead_gb(dynamic_bytes: float, step_temp: float) -> float:
    """CUDA context and workspaces (CUDA_CONTEXT_GB) plus the caching allocator's fragmentation, ~10% of what
    churns (activations, logits, step temporaries). Typical values for CUDA 12, not measured here yet."""
    return CUDA_CONTEXT_GB + FRAGMENTATION * (dynamic_bytes + step_temp) / GB


@dataclass(frozen=True)
class Placement:
    """Where the states live once DeepSpeed or layer-wise offload has moved them (bytes)."""

    gpu_weights: float
    gpu_grads: float
    gpu_opt: float
    host_states: float = 0.0
    disk_states: float = 0.0
    step_temp: float = 0.0
    cast_copies: float = 0.0


def placement(card: ArchCard, s: Setup) -> Placement:
    """Split weights, gradients and optimizer states between the card, host RAM and disk.

    DeepSpeed (its ``estimate_zero2/3_model_states_mem_needs``): 16-bit params + fp32 master + fp32 grads + fp32
    Adam = 16 bytes per trained parameter; ZeRO-2 keeps them on the card, ZeRO-3 gathers one module at a time
    (the largest, fp32), the offload plans move the states to host RAM (+10% pinned buffers), z3-nvme to disk
    with only the swap buffers in RAM. Layer-wise offload keeps embeddings/head on the card and one layer (two
    in flight) of weights, gradients and autocast copies; the rest lives in host RAM."""
    w, g, o = weights(card, s), gradients(card, s), optimizer_states(card, s)
    step, cast = step_temporaries(card, s), autocast_copies(card, s)
    trainable, tb, ds = trainable_params(card, s), s.tb, s.ds
    if ds != "none":
        master, frozen, largest = trainable * 16, w - trainable * tb, 4 * card.largest_module
        if ds == "z2":
            return Placement(frozen + trainable * 2, trainable * 2, master, cast_copies=cast)
        if ds == "z2-offload":
            return Placement(frozen + trainable * 2, trainable * 2, 0, master * ZERO_HOST_BUFFERS, cast_copies=cast)
        if ds == "z3":
            return Placement(frozen + trainable * 2 + largest, 0, master, cast_copies=cast)
        host = (master + frozen + trainable * 2) * ZERO_HOST_BUFFERS   # z3-offload / z3-nvme
        if ds == "z3-nvme":   # the states go to disk; host RAM keeps the swap buffers
            return Placement(largest, 0, 0, min(host, NVME_HOST_BUFFERS), host, cast_copies=cast)
        return Placement(largest, 0, 0, host, cast_copies=cast)
    if s.layerwise:
        layer = card.layer_params
        frac = (card.n_params - card.num_layers * layer) / card.n_params   # share that stays on the card
        return Placement(w * frac + 2 * layer * s.b, g * frac + layer * tb, o * frac, (w + g + o) * (1 - frac),
                         step_temp=step * frac, cast_copies=cast * frac + 2 * layer * 2 * (cast > 0))
    return Placement(w, g, o, step_temp=step, cast_copies=cast)
