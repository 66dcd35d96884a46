/*
 * core/diagnose_sig: the failure signatures as data (issue #19).  One row
 * per signature, in precedence order (core/diagnose.h): a broken install
 * or a bad config first, since everything after it is a consequence; then
 * checkpoints; then a CUDA OOM, whose numbers and traceback pick the row;
 * then host OOM, Ray and NCCL, whose timeouts are mostly what another
 * rank's failure looks like from here.  docs/diagnose.md is generated
 * from this table (`make docs`); tests/test_diagnose.c checks its shape.
 */
#include "diagnose_int.h"

#include <string.h>

/* The patterns every CUDA OOM row shares. */
#define OOM_ANY { "CUDA out of memory", "OutOfMemoryError", \
	"CUDA error: out of memory", "failure 'out of memory'", \
	"cudaErrorMemoryAllocation" }

#define OOM_CAUSE "the GPU ran out of memory[ while allocating {tried}]" \
	"[ on GPU {gpu}][: it holds {capacity} in total][, {free} was free]" \
	"[, {allocated} allocated by PyTorch][, {reserved} reserved by " \
	"PyTorch but unallocated][; the step needed at least {needed}]"

#define OOM_ENV "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"

static const struct diag_sig sigs[] = {
	/* ---- environment: the install is broken ------------------------ */
	{ "env.flash_attn_abi", "env",
	  "flash-attn was built for another torch",
	  { "undefined symbol" }, { "flash_attn" }, { NULL },
	  DIAG_ALWAYS, DIAG_X_SYMBOL,
	  "flash-attn's compiled extension[ {library}] does not match the "
	  "installed torch (C++ ABI or version)[: undefined symbol {symbol}]",
	  "install the flash-attn wheel built for this torch, CUDA and C++ "
	  "ABI (its name says torchX.Y, cuXY and cxx11abiTRUE/FALSE), or "
	  "build it against the installed torch",
	  NULL, NULL,
	  "python -c 'import torch; print(torch.__version__, "
	  "torch.version.cuda, torch._C._GLIBCXX_USE_CXX11_ABI)'\n"
	  "pip uninstall -y flash-attn\n"
	  "pip install --no-build-isolation --no-cache-dir flash-attn",
	  NULL },
	{ "env.bitsandbytes", "env",
	  "bitsandbytes cannot load its CUDA library",
	  { "compiled without GPU support",
	    "CUDA Setup failed despite GPU being available",
	    "Could not load bitsandbytes native library",
	    "libbitsandbytes_cpu.so" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "bitsandbytes loaded its CPU-only library or none at all, so 8-bit "
	  "optimizers and 4/8-bit quantization have no CUDA kernels",
	  "install a bitsandbytes release built for this CUDA (or upgrade "
	  "it); unset BNB_CUDA_VERSION unless you meant to override it",
	  NULL, NULL,
	  "python -m bitsandbytes\npip install -U bitsandbytes", NULL },
	{ "env.deepspeed_ops", "env",
	  "a DeepSpeed op could not be built",
	  { "has no attribute 'ds_opt_adam'", "Error building extension",
	    "CUDA_HOME does not exist", "ninja: build stopped" },
	  { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "DeepSpeed compiles its ops (CPU Adam, fused Adam) on first use, "
	  "and that build failed, so the op is missing",
	  "point CUDA_HOME at the CUDA toolkit torch was built with and have "
	  "ninja installed, or pre-build the ops when installing DeepSpeed",
	  NULL, NULL,
	  "ds_report\nDS_BUILD_CPU_ADAM=1 DS_BUILD_FUSED_ADAM=1 pip install "
	  "--no-cache-dir deepspeed", NULL },
	{ "env.cuda_mismatch", "env",
	  "the CUDA toolkit does not match torch's",
	  { "does not match the version torch was compiled with",
	    "mismatches the version that was used to compile",
	    "CUDAMismatchException" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_CUDA_VERSIONS,
	  "an extension is being compiled with CUDA[ {installed}] but torch "
	  "was built with CUDA[ {torch_cuda}]",
	  "use the CUDA toolkit torch was built with (nvcc --version should "
	  "match torch.version.cuda), or install the torch build for your "
	  "toolkit",
	  NULL, NULL,
	  "nvcc --version\npython -c 'import torch; "
	  "print(torch.version.cuda)'",
	  NULL },
	{ "env.driver_too_old", "env",
	  "the NVIDIA driver is older than torch's CUDA",
	  { "driver on your system is too old",
	    "CUDA driver version is insufficient for CUDA runtime version" },
	  { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_DRIVER,
	  "the NVIDIA driver[ (it supports CUDA {driver_cuda})] is older than "
	  "the CUDA runtime this torch was built with",
	  "upgrade the driver, or install a torch build for the CUDA the "
	  "driver supports (nvidia-smi shows it)",
	  NULL, NULL, "nvidia-smi", NULL },
	{ "env.no_kernel_image", "env",
	  "a kernel was not built for this GPU",
	  { "no kernel image is available for execution on the device",
	    "device kernel image is invalid" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "a CUDA extension (often flash-attn or a custom op) has no kernel "
	  "for this GPU's compute capability",
	  "install a build that covers this GPU's architecture, or build it "
	  "with TORCH_CUDA_ARCH_LIST set to the GPU's compute capability; "
	  "turn the feature off if the GPU is not supported",
	  NULL, NULL,
	  "nvidia-smi --query-gpu=name,compute_cap --format=csv",
	  "attn.sage_compute_capability,precision.bf16_unsupported_gpu" },
	{ "env.flash_attn_missing", "env",
	  "flash-attn is not installed",
	  { "No module named 'flash_attn", "flash_attn seems to be not "
	    "installed" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_MODULE,
	  "the config asks for flash attention but the flash_attn package is "
	  "not installed in this environment",
	  "install flash-attn built for this torch and CUDA, or set "
	  "attn_implementation: sdpa",
	  NULL, "attn_implementation: sdpa\n",
	  "pip install --no-build-isolation flash-attn", NULL },
	{ "env.deepspeed_missing", "env",
	  "DeepSpeed is not installed",
	  { "No module named 'deepspeed", "DeepSpeed is not available" },
	  { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_MODULE,
	  "the config sets deepspeed but the deepspeed package is not "
	  "installed (or not importable) in this environment",
	  "install deepspeed into the environment the launcher uses",
	  NULL, NULL, "pip install deepspeed\nds_report", NULL },
	{ "env.undefined_symbol", "env",
	  "a compiled extension does not match the installed libraries",
	  { "undefined symbol" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_SYMBOL,
	  "a compiled extension[ {library}] was built against other versions "
	  "of torch or CUDA than those installed[: undefined symbol "
	  "{symbol}]",
	  "reinstall that package for the installed torch and CUDA (or "
	  "rebuild it with --no-build-isolation)",
	  NULL, NULL, NULL, NULL },
	{ "env.missing_module", "env",
	  "a Python module is missing",
	  /* The exception, not a warning about an optional import. */
	  { "ModuleNotFoundError: No module named '",
	    "ImportError: No module named '" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_MODULE,
	  "Python could not import[ {module}]: it is not installed in the "
	  "environment the launcher runs",
	  "install it into that environment (check which python the "
	  "launcher uses)",
	  NULL, NULL, "which python; python -m pip list", NULL },

	/* ---- config: accelerate, DeepSpeed, FSDP refused it ------------- */
	{ "config.deepspeed_fsdp_both", "config",
	  "DeepSpeed and FSDP are both configured",
	  { "deepspeed and fsdp cannot be used together",
	    "DeepSpeed and FSDP cannot be used together" },
	  { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "the config sets both deepspeed and fsdp; they are two ways to "
	  "shard the same states and only one can wrap the model",
	  "keep one: remove the deepspeed key, or remove fsdp and "
	  "fsdp_config",
	  NULL, NULL, NULL,
	  "fsdp.deepspeed_exclusive_legacy,fsdp.deepspeed_with_fsdp_config" },
	{ "deepspeed.batch_mismatch", "config",
	  "DeepSpeed's batch sizes do not multiply out",
	  { "Check batch related parameters", "Micro batch size per gpu:",
	    "Train batch size:" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "the DeepSpeed config's train_batch_size is not "
	  "train_micro_batch_size_per_gpu x gradient_accumulation_steps x the "
	  "number of GPUs actually launched",
	  "set the batch fields of the DeepSpeed JSON to \"auto\" so they "
	  "follow micro_batch_size and gradient_accumulation_steps, and check "
	  "how many processes the launcher started",
	  NULL, NULL, NULL, "deepspeed.hardcoded_value_mismatch" },
	{ "deepspeed.config_mismatch", "config",
	  "the DeepSpeed JSON disagrees with the trainer",
	  { "DeepSpeed config values that mismatch" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "values hard-coded in the DeepSpeed JSON differ from the training "
	  "arguments, and transformers refuses to pick one",
	  "set those DeepSpeed fields to \"auto\", or make the config's keys "
	  "equal to them",
	  NULL, NULL, NULL, "deepspeed.hardcoded_value_mismatch" },
	{ "fsdp.mixed_dtype", "config",
	  "FSDP found parameters of different dtypes",
	  { "Must flatten tensors with uniform dtype",
	    "requires uniform dtype", "Cannot flatten integer dtype tensors" },
	  { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_DTYPES,
	  "FSDP flattens each wrapped module's parameters into one tensor, "
	  "and they have different dtypes[ ({dtype_a} and {dtype_b})]: "
	  "typically 4-bit weights stored as uint8, or LoRA weights left in "
	  "fp32 beside a bf16 base",
	  "store QLoRA's 4-bit weights in the training dtype and keep the "
	  "adapters in it too, or wrap with use_orig_params",
	  NULL,
	  "bnb_config_kwargs:\n  bnb_4bit_quant_storage: bfloat16\n",
	  NULL, "quant.fsdp_qlora_quant_storage,quant.fsdp_qlora_model_types" },

	/* ---- checkpoints ---------------------------------------------- */
	{ "ckpt.shape_mismatch", "checkpoint",
	  "a checkpoint's tensor shapes do not match the model",
	  { "size mismatch for " }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_SHAPES,
	  "the checkpoint was saved from a model of another shape[: "
	  "{param} is {ckpt_shape} in the checkpoint and {model_shape} in "
	  "the model]",
	  "load it into the same base_model it was trained from; when only "
	  "the embeddings differ, the tokenizer added tokens (resize the "
	  "embeddings, or use the tokenizer saved with the checkpoint)",
	  NULL, NULL, NULL, NULL },
	{ "ckpt.missing_keys", "checkpoint",
	  "a checkpoint's keys do not match the model",
	  { "Missing key(s) in state_dict", "Unexpected key(s) in state_dict",
	    "with unexpected keys" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "the checkpoint holds other parameter names than the model: "
	  "typically an adapter-only checkpoint loaded as a full model (or "
	  "the reverse), or a wrapped model's prefixed names",
	  "resume an adapter run with the same adapter settings (adapter, "
	  "lora_model_dir), or merge the adapter before loading it as a full "
	  "model",
	  NULL, NULL, NULL, NULL },
	{ "ckpt.fsdp_sharded", "checkpoint",
	  "a sharded FSDP checkpoint will not load or save",
	  { "FSDP assumes", "CheckpointException" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "FSDP could not gather or scatter the sharded state dict: a "
	  "SHARDED_STATE_DICT checkpoint needs every rank (and the same "
	  "world size) to load, and a full state dict must be gathered "
	  "before it is saved",
	  "save a full state dict at the end, or load the sharded checkpoint "
	  "with the same number of GPUs; consolidate it with axolotl "
	  "merge-sharded-fsdp-weights for inference",
	  NULL,
	  "fsdp_config:\n  state_dict_type: FULL_STATE_DICT\n",
	  NULL,
	  "fsdp.sharded_final_save,fsdp.final_state_dict_type_toplevel_ignored"
	},

	/* ---- GPU memory: the CUDA caching allocator gave up ------------- */
	{ "oom.other_process", "oom",
	  "another process holds the GPU's memory",
	  OOM_ANY, { NULL }, { NULL },
	  DIAG_OTHER_PROCESS, DIAG_X_CUDA_OOM,
	  OOM_CAUSE "; {other} of it is held outside this process",
	  "free the GPU (a previous run still alive, another job, a "
	  "notebook) or pick idle GPUs with CUDA_VISIBLE_DEVICES",
	  NULL, NULL,
	  "nvidia-smi --query-compute-apps=pid,process_name,used_memory "
	  "--format=csv",
	  NULL },
	{ "oom.fragmentation", "oom",
	  "GPU memory is fragmented",
	  OOM_ANY, { NULL }, { NULL },
	  DIAG_FRAGMENTED, DIAG_X_CUDA_OOM,
	  OOM_CAUSE "; PyTorch held enough, but not in one piece",
	  "let the allocator grow segments instead of splitting them "
	  "(expandable segments); the run is also close to the capacity, so "
	  "the keys below buy headroom",
	  OOM_ENV, "gradient_checkpointing: true\n", NULL,
	  "memory.low_headroom,memory.exceeds_capacity" },
	{ "oom.weights", "oom",
	  "the model does not fit while loading",
	  OOM_ANY, { NULL }, { NULL },
	  DIAG_PHASE_WEIGHTS, DIAG_X_CUDA_OOM,
	  OOM_CAUSE "; it happened while the weights were being loaded or "
	  "moved to the GPU, before training started",
	  "shard the weights (ZeRO-3 or FSDP full shard, loading on the CPU "
	  "first) or quantize the base (QLoRA)",
	  NULL, "deepspeed: deepspeed_configs/zero3_bf16.json\n", NULL,
	  "memory.exceeds_capacity" },
	{ "oom.optimizer", "oom",
	  "the optimizer states do not fit",
	  OOM_ANY, { NULL }, { NULL },
	  DIAG_PHASE_OPTIMIZER, DIAG_X_CUDA_OOM,
	  OOM_CAUSE "; it happened in the optimizer step, which allocates "
	  "its states (two fp32 values per trained parameter for Adam) on "
	  "first use",
	  "shard the optimizer states over the GPUs (ZeRO-2/3, FSDP), use an "
	  "8-bit optimizer, or train an adapter instead of every weight",
	  NULL, "deepspeed: deepspeed_configs/zero3_bf16.json\n", NULL,
	  "memory.exceeds_capacity" },
	{ "oom.logits", "oom",
	  "the logits do not fit",
	  OOM_ANY, { NULL }, { NULL },
	  DIAG_PHASE_LOGITS, DIAG_X_CUDA_OOM,
	  OOM_CAUSE "; it happened in the LM head or the loss, where the "
	  "logits (tokens x vocabulary, upcast to fp32) are materialized",
	  "compute the loss without materializing the logits (Cut Cross "
	  "Entropy), or lower micro_batch_size or sequence_len",
	  NULL,
	  "plugins:\n  - axolotl.integrations.cut_cross_entropy."
	  "CutCrossEntropyPlugin\n", NULL,
	  "memory.exceeds_capacity,ce.cce_plugin_default_on" },
	{ "oom.activations", "oom",
	  "the activations do not fit",
	  OOM_ANY, { NULL }, { NULL },
	  DIAG_PHASE_ACTIVATIONS, DIAG_X_CUDA_OOM,
	  OOM_CAUSE "; it happened in the forward or backward pass, whose "
	  "saved activations grow with micro_batch_size x sequence_len",
	  "keep fewer activations: gradient checkpointing, a smaller "
	  "micro_batch_size with more accumulation, or a shorter "
	  "sequence_len",
	  OOM_ENV, "gradient_checkpointing: true\nmicro_batch_size: 1\n", NULL,
	  "memory.exceeds_capacity,memory.low_headroom" },
	{ "oom.cuda", "oom",
	  "the GPU ran out of memory",
	  OOM_ANY, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_CUDA_OOM,
	  OOM_CAUSE "; the log does not show which part of the step it was",
	  "give the config (--config, or config/check_id in the request) to "
	  "have the estimate name the term and the keys that fit; meanwhile "
	  "lower micro_batch_size or turn on gradient checkpointing",
	  OOM_ENV, "gradient_checkpointing: true\n", NULL,
	  "memory.exceeds_capacity,memory.low_headroom" },

	/* ---- the host ------------------------------------------------- */
	{ "host.oom", "host",
	  "a worker was killed (host out of memory)",
	  { "exitcode: -9", "exitcode  : -9", "Signals.SIGKILL",
	    "Out of memory: Killed process", "oom-kill" },
	  { NULL }, { "forcefully exiting", NULL },
	  DIAG_ALWAYS, DIAG_X_LOCAL_RANK,
	  "a training process[ (local rank {local_rank})] was killed with "
	  "SIGKILL, which on a training host is almost always the kernel's "
	  "OOM killer: host RAM ran out (loading a checkpoint, dataset "
	  "workers, CPU offload)",
	  "load weights without a full copy per rank (low_cpu_mem_usage, "
	  "cpu_ram_efficient_loading), use fewer dataloader workers, give the "
	  "container more memory; dmesg names the killed process",
	  NULL, NULL, "dmesg -T | grep -i -E 'killed process|out of memory'",
	  "memory.cpu_offload_exceeds_host" },

	/* ---- Ray ------------------------------------------------------ */
	{ "ray.no_gpus", "ray",
	  "a Ray worker cannot see a GPU",
	  { "No CUDA GPUs are available", "no CUDA-capable device" },
	  { NULL }, { NULL },
	  DIAG_NEAR_RAY, DIAG_X_NONE,
	  "Ray started the worker without a GPU in its CUDA_VISIBLE_DEVICES: "
	  "the task or actor did not request one (num_gpus / use_gpu) or the "
	  "node registered none",
	  "request the GPUs from Ray (ScalingConfig(use_gpu=True) or "
	  "num_gpus=1), and check ray status lists GPUs on the node",
	  NULL, NULL, "ray status", "ray.world_size_is_num_workers" },
	{ "ray.resources", "ray",
	  "Ray cannot schedule the requested resources",
	  { "cannot be scheduled right now",
	    "could not find a node type to satisfy the request",
	    "is pending and cannot currently be scheduled" },
	  { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "the job asks Ray for more GPUs or CPUs than any node (or the "
	  "cluster) has free, so the workers wait",
	  "ask for what the nodes have (workers x GPUs per worker), free the "
	  "actors holding them, or add nodes",
	  NULL, NULL, "ray status -v", "ray.world_size_is_num_workers" },
	{ "cuda.no_device", "cuda",
	  "the process cannot see a GPU",
	  { "No CUDA GPUs are available", "no CUDA-capable device" },
	  { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "CUDA found no usable GPU: CUDA_VISIBLE_DEVICES is empty or wrong, "
	  "the container was started without GPUs, or the driver is not "
	  "loaded",
	  "check CUDA_VISIBLE_DEVICES and that nvidia-smi works inside the "
	  "job's container",
	  NULL, NULL, "nvidia-smi\necho $CUDA_VISIBLE_DEVICES", NULL },

	/* ---- NCCL ----------------------------------------------------- */
	{ "nccl.unhandled_cuda_error", "nccl",
	  "NCCL hit a CUDA error",
	  { "ncclUnhandledCudaError", "unhandled cuda error" },
	  { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "a CUDA call inside NCCL failed (its 'Last error' line says which): "
	  "out of memory for NCCL's buffers, a faulty or busy GPU, or "
	  "peer-to-peer access that does not work on this machine",
	  "run with NCCL_DEBUG=INFO to see the failing call; if P2P is the "
	  "cause, disable it",
	  "NCCL_DEBUG=INFO\nNCCL_P2P_DISABLE=1", NULL,
	  "nvidia-smi topo -m", NULL },
	{ "nccl.duplicate_gpu", "nccl",
	  "two ranks use the same GPU",
	  { "Duplicate GPU detected" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_RANKS,
	  "[ranks {rank_a} and {rank_b} are both on CUDA device {device}: ]"
	  "more processes were launched than the GPUs each one sees, or the "
	  "script pins every rank to one device",
	  "launch one process per visible GPU and let each rank use "
	  "LOCAL_RANK as its device (do not set a fixed CUDA device in the "
	  "script)",
	  NULL, NULL, "echo $CUDA_VISIBLE_DEVICES; nvidia-smi -L",
	  "parallel.nd_product_mismatch" },
	{ "nccl.shm", "nccl",
	  "NCCL cannot allocate shared memory",
	  { "Error while creating shared memory segment",
	    "Error while attaching to shared memory segment",
	    "posix_fallocate failed", "failed to extend /dev/shm" },
	  { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "/dev/shm is too small (containers default to 64 MiB) or full, and "
	  "NCCL's intra-node transport lives there",
	  "give the container a larger /dev/shm (docker --shm-size=16g or "
	  "--ipc=host; a memory-backed emptyDir in Kubernetes); as a stopgap "
	  "NCCL_SHM_DISABLE=1 (slower)",
	  "NCCL_SHM_DISABLE=1", NULL, "df -h /dev/shm", NULL },
	{ "nccl.network", "nccl",
	  "NCCL cannot reach another node",
	  { "socketStartConnect", "Connection closed by remote peer",
	    "Socket recv failed", "NET/IB : Got completion" },
	  { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "a connection between ranks failed: the wrong network interface, a "
	  "firewall between nodes, or an InfiniBand/RoCE fault",
	  "pin the interface NCCL uses (NCCL_SOCKET_IFNAME) and try without "
	  "InfiniBand to tell the fabric from the setup",
	  "NCCL_DEBUG=INFO\nNCCL_SOCKET_IFNAME=eth0\nNCCL_IB_DISABLE=1", NULL,
	  "ip -br addr\nibv_devinfo", "perf.comm_bound" },
	{ "nccl.system_error", "nccl",
	  "NCCL hit a system error",
	  { "ncclSystemError", "unhandled system error" },
	  { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "a system call or library NCCL needs failed (socket, shared "
	  "memory, the InfiniBand verbs library); NCCL_DEBUG=INFO names it",
	  "run with NCCL_DEBUG=INFO; if it is InfiniBand, test with it "
	  "disabled; check /dev/shm and ulimit -l in the container",
	  "NCCL_DEBUG=INFO\nNCCL_IB_DISABLE=1", NULL, "ulimit -l; df -h "
	  "/dev/shm", NULL },
	{ "nccl.internal_error", "nccl",
	  "NCCL hit an internal error",
	  { "ncclInternalError" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "NCCL reported an internal error, usually the setup underneath it "
	  "(plugins, topology files, mismatched NCCL versions across nodes)",
	  "run with NCCL_DEBUG=INFO and check that every node has the same "
	  "NCCL and no stray NCCL_* settings (such as NCCL_GRAPH_FILE)",
	  "NCCL_DEBUG=INFO", NULL, "env | grep NCCL_", NULL },
	{ "nccl.invalid_usage", "nccl",
	  "NCCL was called the wrong way",
	  { "ncclInvalidUsage" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "NCCL rejected how it was called: ranks disagree on the world size "
	  "or devices, or collectives differ between ranks",
	  "check that every rank gets the same world size and its own GPU",
	  "NCCL_DEBUG=WARN", NULL, NULL, "parallel.nd_product_mismatch" },
	{ "nccl.remote_error", "nccl",
	  "another rank failed",
	  { "ncclRemoteError" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "a peer rank failed or disconnected; its own log has the cause",
	  "read the first failing rank's log (and dmesg on its node)",
	  "NCCL_DEBUG=INFO", NULL, NULL, NULL },
	{ "nccl.timeout", "nccl",
	  "a collective timed out",
	  { "Watchdog caught collective operation timeout",
	    "WorkNCCL::checkTimeout", "collective operation timeout" },
	  { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NCCL_WORK,
	  "a collective[ ({op})] waited[ {ran_ms} ms] for ranks that never "
	  "joined[ (timeout {timeout_ms} ms)]: another rank crashed, hung, or "
	  "is still busy (a long evaluation, dataset preprocessing or "
	  "checkpoint on rank 0), or the network stalled",
	  "find the rank that did not arrive (its own error, or what it was "
	  "doing); raise the timeout only when a rank is legitimately slow",
	  "TORCH_NCCL_ASYNC_ERROR_HANDLING=1\nNCCL_DEBUG=INFO\n"
	  "TORCH_DISTRIBUTED_DEBUG=DETAIL",
	  "ddp_timeout: 7200\n", NULL, "perf.comm_bound" },
	{ "nccl.error", "nccl",
	  "NCCL reported an error",
	  { "NCCL error", "NCCL WARN" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "NCCL reported an error or warning; the lines around it say which "
	  "transport or call failed",
	  "rerun with NCCL_DEBUG=INFO to see the failing step",
	  "NCCL_DEBUG=INFO", NULL, NULL, NULL },

	/* ---- CUDA ----------------------------------------------------- */
	{ "cuda.device_assert", "cuda",
	  "a device-side assert fired",
	  { "device-side assert triggered" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "a kernel's own check failed, most often a token id or label "
	  "outside the embedding or vocabulary (a tokenizer that does not "
	  "match the model, added tokens without resized embeddings)",
	  "rerun with CUDA_LAUNCH_BLOCKING=1 to see the failing op; check "
	  "that the tokenizer and model vocabularies match",
	  "CUDA_LAUNCH_BLOCKING=1", NULL, NULL, NULL },
	{ "cuda.illegal_memory_access", "cuda",
	  "a kernel read or wrote outside its memory",
	  { "an illegal memory access was encountered" }, { NULL }, { NULL },
	  DIAG_ALWAYS, DIAG_X_NONE,
	  "a CUDA kernel accessed memory it does not own: a bug in a custom "
	  "kernel or an extension built for another torch, rarely faulty "
	  "hardware",
	  "rerun with CUDA_LAUNCH_BLOCKING=1 to find the op; try without "
	  "custom kernels (flash attention, Liger, compile) to isolate it",
	  "CUDA_LAUNCH_BLOCKING=1", NULL, NULL, NULL },
};

#define NSIGS (sizeof(sigs) / sizeof(sigs[0]))

const struct diag_phase_def diag_phases[DIAG_PH_COUNT] = {
	[DIAG_PH_WEIGHTS] = { "weights", { "from_pretrained",
	    "_load_pretrained_model", "load_state_dict",
	    "set_module_tensor_to_device", "dispatch_model", ", in _apply",
	    ", in convert", "load_checkpoint_and_dispatch", NULL } },
	[DIAG_PH_OPTIMIZER] = { "optimizer", { "optimizer.step",
	    "optimizer_step", "_multi_tensor_adam", "_single_tensor_adam",
	    "_fused_adam", "_init_group", "exp_avg", "/optim/adam", NULL } },
	[DIAG_PH_LOGITS] = { "logits", { "cross_entropy", "lm_head",
	    "logits.float()", "log_softmax", "loss_function",
	    "ForCausalLMLoss", NULL } },
	[DIAG_PH_ACTIVATIONS] = { "activations", { "backward",
	    ", in forward", "_call_impl", "training_step", "compute_loss",
	    "scaled_dot_product_attention", NULL } },
};

const char *const diag_ray_markers[] = { "ray::", "RayTaskError",
	"RayTrainWorker", "ray.exceptions", "ray/train", "ray/tune", NULL };

const char *const diag_error_markers[] = { "Error", "ERROR", "error:",
	"Exception", "FAILED", "failed (exitcode", NULL };

/* Versions as logs print them: NCCL's banner, nvidia-smi, nvcc, DeepSpeed's
   info line, pip freeze, transformers-cli env. */
const struct diag_version_def diag_versions[] = {
	{ "nccl", "NCCL version ", " ,)" },
	{ "cuda_driver", "CUDA Version: ", " |" },
	{ "nvidia_driver", "Driver Version: ", " |" },
	{ "nvcc", "Cuda compilation tools, release ", " ," },
	{ "deepspeed", "DeepSpeed info: version=", " ," },
	{ "torch", "torch==", " ;" },
	{ "torch", "PyTorch version (GPU?): ", " " },
	{ "transformers", "transformers==", " ;" },
	{ "transformers", "`transformers` version: ", " " },
	{ "accelerate", "accelerate==", " ;" },
	{ "accelerate", "`Accelerate` version: ", " " },
	{ "deepspeed", "deepspeed==", " ;" },
	{ "flash_attn", "flash-attn==", " ;" },
	{ "flash_attn", "flash_attn==", " ;" },
	{ "bitsandbytes", "bitsandbytes==", " ;" },
	{ "axolotl", "axolotl==", " ;" },
	{ NULL, NULL, NULL }
};

const char diag_traceback_marker[] = "Traceback (most recent call last)";

const char *const diag_var_names[] = { "tried", "capacity", "free",
	"allocated", "reserved", "in_use", "other", "needed", "gpu",
	"symbol", "library", "module", "installed", "torch_cuda", "found",
	"driver_cuda", "param", "ckpt_shape", "model_shape", "op",
	"timeout_ms", "ran_ms", "rank_a", "rank_b", "device", "dtype_a",
	"dtype_b", "local_rank", NULL };

const struct diag_sig *
diagnose_signatures(size_t *n)
{
	*n = NSIGS;
	return sigs;
}

const struct diag_sig *
diagnose_find(const char *id)
{
	size_t i;

	for (i = 0; id != NULL && i < NSIGS; i++)
		if (strcmp(sigs[i].id, id) == 0)
			return &sigs[i];
	return NULL;
}
