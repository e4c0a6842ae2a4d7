"""The words of the errors met starting, queueing, resuming and managing a run (studio/runs: jobs.py, manage.py,
queue.py, run_dir.py), training it (studio/engine: arguments.py, launch.py, nvme.py, preference.py, reshard.py,
run.py), and of the command line's own checks (studio/cli: estimate.py, evaluate.py, export.py, feedback.py,
models.py, train.py).

Each code: what / why / fix in (English, Chinese); ``fix`` is the command line's, ``page_fix`` the page's where
they differ (see studio/words/errors.py for the values and the rule). A literal brace is doubled. A flag that a
command-line error names in what is wrong is a value (``{flag}``): what is wrong reads the same on both surfaces.
"""
from __future__ import annotations

from typing import Any

from .entry import error, message

Pair = tuple[str, str]

_START_AGAIN = ("free some space, then press Start again", "腾出一些空间，然后再按一次“开始”")
_LOWER_SAVE_STEPS_PAGE = ("lower Checkpoint every N steps on the Settings tab so checkpoints are written sooner",
                          "在“设置”页调低“每 N 步保存检查点”，让检查点更早写出")
_NEW_FOLDER_PAGE = ("set another Run folder on the Settings tab", "在“设置”页换一个“运行文件夹”")

# ---- disk offload (z3-nvme): each missing piece, and its fix (engine/nvme.py lists them all at once)
_NVME_WHAT = ("Disk offload (z3-nvme) cannot start: ", "磁盘卸载（z3-nvme）无法启动：")
_NVME_PROBLEMS: dict[str, tuple[Pair, Pair]] = {  # name -> (problem, its fix); the page's fix: _NVME_PAGE_FIXES
    "no_path": (("no {f_offload_nvme_path} is set", "没有设置{f_offload_nvme_path}"),
                ("set {f_offload_nvme_path} to a folder on a fast local disk",
                 "把{f_offload_nvme_path}设为快速本地磁盘上的一个文件夹")),
    "unwritable": (("the offload folder '{folder}' cannot be written ({detail})",
                    "卸载文件夹“{folder}”无法写入（{detail}）"),
                   ("pick a folder you can write to on a local disk", "选择本地磁盘上一个可以写入的文件夹")),
    "low_space": (("the offload folder '{folder}' has {free:.1f} GB free, the plan needs about {need:.1f} GB",
                   "卸载文件夹“{folder}”只剩 {free:.1f} GB 可用空间，该方案大约需要 {need:.1f} GB"),
                  ("free space there or pick a larger disk", "在那里腾出空间，或选择更大的磁盘")),
    "libaio": (("DeepSpeed's async_io op cannot be built here: libaio (the .so and its headers) was not found",
                "DeepSpeed 的 async_io 算子无法在这里构建：找不到 libaio（.so 文件及其头文件）"),
               ("install libaio and its headers (Debian/Ubuntu: sudo apt-get install libaio-dev; RHEL/Rocky: "
                "sudo dnf install libaio-devel), or choose the z3-offload plan (host RAM instead of disk)",
                "安装 libaio 及其头文件（Debian/Ubuntu 上运行 `sudo apt-get install libaio-dev`；RHEL/Rocky 上运行 "
                "`sudo dnf install libaio-devel`），或选择 z3-offload 方案（用主机内存代替磁盘）")),
}


_NVME_PAGE_FIXES: dict[str, Pair] = {
    "no_path": ("set {f_offload_nvme_path} on the Settings tab to a folder on a fast local disk",
                "在“设置”页把{f_offload_nvme_path}设为快速本地磁盘上的一个文件夹")}


def _nvme(*names: str) -> dict[str, Pair]:
    """The entry for these missing pieces together: the problems joined with "; ", and their fixes."""
    problems = [_NVME_PROBLEMS[n][0] for n in names]
    fixes = [_NVME_PROBLEMS[n][1] for n in names]
    page = [_NVME_PAGE_FIXES.get(n, _NVME_PROBLEMS[n][1]) for n in names]
    entry = {"what": (_NVME_WHAT[0] + "; ".join(p[0] for p in problems),
                      _NVME_WHAT[1] + "；".join(p[1] for p in problems)),
             "fix": ("; ".join(f[0] for f in fixes), "；".join(f[1] for f in fixes))}
    if page != fixes:
        entry["page_fix"] = ("; ".join(f[0] for f in page), "；".join(f[1] for f in page))
    return entry


# engine.nvme_<piece>[_and_<piece>]: the pieces in _NVME_PROBLEMS' order (as engine/nvme.py names them)
_NVME_ERRORS = [error("engine.nvme_" + "_and_".join(names), **_nvme(*names)) for names in (
    ("no_path",), ("unwritable",), ("low_space",), ("libaio",),
    ("no_path", "libaio"), ("unwritable", "libaio"), ("low_space", "libaio"))]


# ---- a cluster request's problems (engine/launch.py check_cluster_shape lists them all at once, as the value
# ``problems`` of engine.cluster_shape; studio/words/errors.py words each): the command line's flags it names
CLUSTER_PROBLEMS: list[Any] = [
    message("cluster.nnodes", "--nnodes must be at least 1 (got {got})", "--nnodes 至少要为 1（实际是 {got}）"),
    message("cluster.gpus_per_node", "--gpus-per-node must be at least 1 (got {got})",
            "--gpus-per-node 至少要为 1（实际是 {got}）"),
    message("cluster.master_addr", "--master-addr '{addr}' is not a host name or address",
            "--master-addr 的“{addr}”不是主机名或地址"),
    message("cluster.master_port", "--master-port must be between 1024 and 65535 (got {got})",
            "--master-port 必须在 1024 到 65535 之间（实际是 {got}）"),
    message("cluster.host_names", "--hosts has names that are not host names: {hosts}", "--hosts 中有不是主机名的名字：{hosts}"),
    message("cluster.host_count", "--hosts lists {hosts} machines but --nnodes is {nnodes}",
            "--hosts 列出了 {hosts} 台机器，而 --nnodes 是 {nnodes}"),
    message("cluster.deepspeed", "several processes need a DeepSpeed plan: set deepspeed to z2 or z3 in the config "
                                 "(or --set deepspeed=z3)",
            "多个进程需要一个 DeepSpeed 方案：请在配置中把 deepspeed 设为 z2 或 z3（或用 --set deepspeed=z3）"),
]

# the fixes two codes share (a folder's listing cut short, a run's step known or not)
_FOREIGN_FILES_FIX = {
    "fix": ("train into a new folder with --set output_dir=NEW_FOLDER (the studio never empties a folder it did not "
            "make, not even with overwrite_output_dir)",
            "请用 --set output_dir=新文件夹 训练到一个新文件夹中（本工作室从不清空不是它生成的文件夹，即使设置了 "
            "overwrite_output_dir 也不会）"),
    "page_fix": (_NEW_FOLDER_PAGE[0] + " (the studio never empties a folder it did not make)",
                 _NEW_FOLDER_PAGE[1] + "（本工作室从不清空不是它生成的文件夹）")}
_HAS_RUN_FIX = {
    "fix": ("train into a new folder with --set output_dir=NEW_FOLDER, continue that run with --resume last, or "
            "replace it with --set overwrite_output_dir=true",
            "请用 --set output_dir=新文件夹 训练到一个新文件夹中，用 --resume last 继续那次运行，或用 "
            "--set overwrite_output_dir=true 替换它"),
    "page_fix": (_NEW_FOLDER_PAGE[0] + ", resume that run, or tick Replace an earlier run in the run folder",
                 _NEW_FOLDER_PAGE[1] + "，继续那次运行，或勾选“替换运行文件夹中已有的运行”")}

ENTRIES: list[Any] = [
    # ---- a run that blew up (engine/callbacks.py DivergenceError): why, as a coded phrase, and the checkpoint kept
    error("engine.diverged", what=("Training diverged at step {step}: {cause}", "训练在第 {step} 步发散：{cause}"),
          fix=("lower the learning rate (e.g. divide it by 10), keep gradient clipping on (max_grad_norm 1.0), check "
               "the data for empty or garbage rows, and turn off fp16 (use bf16 or fp32); {kept}",
               "调低学习率（例如除以 10），保持梯度裁剪开启（max_grad_norm 1.0），检查数据中是否有空行或乱码行，"
               "并关闭 fp16（改用 bf16 或 fp32）；{kept}"),
          page_fix=("lower {f_learning_rate} (e.g. divide it by 10), keep {f_max_grad_norm} at 1.0, check the data for "
                    "empty or garbage rows, and set {f_precision} to bf16 or fp32 rather than fp16; {kept}",
                    "调低{f_learning_rate}（例如除以 10），把{f_max_grad_norm}保持为 1.0，检查数据中是否有空行或乱码行，"
                    "并把{f_precision}设为 bf16 或 fp32 而不是 fp16；{kept}")),
    message("engine.diverged_loss", "the loss became {loss}", "损失变成了 {loss}"),
    message("engine.diverged_norm", "the gradient norm became {value}", "梯度范数变成了 {value}"),
    message("engine.diverged_spike", "the gradient norm exploded to {value:.3g}", "梯度范数暴涨到 {value:.3g}"),
    message("engine.diverged_spike_median",
            "the gradient norm exploded to {value:.3g}, {x:.0f}x the median {median:.3g} so far",
            "梯度范数暴涨到 {value:.3g}，是此前中位数 {median:.3g} 的 {x:.0f} 倍"),
    message("engine.diverged_kept", "the last good checkpoint, {name} ({path}), was kept: resume from it after the fix",
            "最后一个完好的检查点 {name}（{path}）已保留：修正后从它继续训练"),
    message("engine.diverged_none", "no checkpoint was saved before this step, so start the run again after the fix",
            "这一步之前没有保存任何检查点，修正后请重新开始训练"),
    error("engine.cluster_shape", what=("Cannot write the cluster files: {problems}", "无法写出集群文件：{problems}"),
          fix=("fix the flags above and run the command again", "请改正上面的参数，然后重新运行命令")),
    # ---- starting, resuming and supervising a run (runs/jobs.py)
    error("run.disk_full_config", what=("The disk is full ({detail}) while saving the run's config in '{run}'",
                                        "磁盘已满（{detail}），发生在保存运行“{run}”的配置时"),
          fix=_START_AGAIN),
    error("run.disk_full_folder", what=("The disk is full ({detail}) while preparing the run folder in '{run}'",
                                        "磁盘已满（{detail}），发生在准备运行“{run}”的文件夹时"),
          fix=_START_AGAIN),
    error("run.write_config", what=("Cannot write the run folder '{path}' while saving the run's config",
                                    "保存运行的配置时无法写入运行文件夹“{path}”"),
          why=("{detail}", "{detail}"),
          fix=("check that the folder is writable", "检查这个文件夹是否可写")),
    error("run.write_folder", what=("Cannot write the run folder '{path}' while preparing the run folder",
                                    "准备运行文件夹时无法写入运行文件夹“{path}”"),
          why=("{detail}", "{detail}"),
          fix=("check that the folder is writable", "检查这个文件夹是否可写")),
    error("run.exists", what=("The run folder '{path}' already holds a run", "运行文件夹“{path}”中已经有一次运行"),
          fix=("choose another output_dir, or resume that run", "换一个 output_dir，或继续那次运行"),
          page_fix=("choose another Run folder on the Settings tab, or resume that run",
                    "在“设置”页换一个“运行文件夹”，或继续那次运行")),
    error("run.nothing_to_resume", what=("There is no run to resume", "没有可以继续的运行"),
          fix=("start a run first, or pick one in the run list", "请先开始一次运行，或在运行列表中选择一个")),
    error("run.no_checkpoint", what=("Run '{name}' has no complete checkpoint to resume from",
                                     "运行“{name}”没有可以继续的完整检查点"),
          fix=("start it again, or lower save_steps so checkpoints are written sooner",
               "重新开始它，或调低 save_steps，让检查点更早写出"),
          page_fix=("start it again, or " + _LOWER_SAVE_STEPS_PAGE[0],
                    "重新开始它，或" + _LOWER_SAVE_STEPS_PAGE[1])),
    error("run.finished", what=("Run '{name}' already finished", "运行“{name}”已经完成"),
          fix=("start a new run to train more", "要继续训练，请开始一次新的运行")),
    error("run.busy", what=("A training run is already going ('{name}')", "已经有一次训练在进行（“{name}”）"),
          fix=("wait for it to finish, or press Abort first; one run at a time keeps the card's memory for "
               "that run", "请等它结束，或先按“中止”；一次只跑一个运行，显卡的显存才能全部留给它")),
    error("run.start_failed", what=("Could not start the training process", "无法启动训练进程"),
          why=("{detail}", "{detail}"),
          fix=("check the Python install", "检查 Python 的安装")),
    # ---- renaming and deleting runs (runs/manage.py)
    error("run.pick", what=("'{name}' is not a run in this studio's runs folder", "“{name}”不是本工作室运行文件夹中的运行"),
          fix=("pick a run from the list", "从列表中选择一个运行")),
    error("run.training_now", what=("Run '{name}' is training now", "运行“{name}”正在训练"),
          fix=("abort it first, or wait until it ends", "请先中止它，或等它结束")),
    error("run.name_taken", what=("A run or folder named '{name}' already exists", "已经有名为“{name}”的运行或文件夹"),
          fix=("type another name", "请输入另一个名字")),
    # ---- the queue of runs waiting for the card (runs/queue.py)
    error("run.already_running", what=("The run '{name}' is training with these settings right now",
                                       "运行“{name}”正在用这组设置训练"),
          fix=("watch it on the Train tab (or the Runs tab), or change a setting to queue another run",
               "请在“训练”页（或“运行”页）查看它，或修改某项设置后再排队另一次运行")),
    error("run.already_queued", what=("These settings are already queued (or just started) by this login",
                                      "这组设置已经由本登录排队（或刚刚开始）"),
          fix=("wait for that run, or change a setting to queue another one",
               "请等待那次运行，或修改某项设置后再排队另一次")),
    error("run.queue_full", what=("This login already has {n} runs waiting in the queue, the most one login may queue",
                                  "本登录已有 {n} 次运行在队列中等待，这是一个登录最多可排队的数量"),
          fix=("wait until one of them starts, or clear the queue on the Train tab",
               "请等其中一次开始，或在“训练”页清空队列")),
    # ---- the run a demo shows (runs/run_dir.py, demo_run)
    error("run.demo_outside", what=("'{text}' is outside the runs folder '{root}'", "“{text}”在运行文件夹“{root}”之外"),
          fix=("give the name of a run in that folder (the demo shows nothing else of this machine)",
               "请给出那个文件夹中某次运行的名字（演示页面不展示本机的其他任何内容）")),
    error("run.demo_not_run", what=("'{text}' is not a run folder in '{root}'", "“{text}”不是“{root}”中的运行文件夹"),
          fix=("give the name of a finished run, e.g. {names}; --workspace says which workspace's "
               "runs folder to look in",
               "请给出一次已完成运行的名字，例如 {names}；--workspace 指定在哪个工作区的运行文件夹中查找"),
          page_fix=("pick a finished run on the Evaluate tab", "在“评估”页选择一个已完成的运行")),
    error("run.demo_no_runs", what=("'{text}' is not a run folder in '{root}'", "“{text}”不是“{root}”中的运行文件夹"),
          fix=("give the name of a finished run (train one first); --workspace says which "
               "workspace's runs folder to look in",
               "请给出一次已完成运行的名字（先训练一次）；--workspace 指定在哪个工作区的运行文件夹中查找"),
          page_fix=("pick a finished run on the Evaluate tab", "在“评估”页选择一个已完成的运行")),
    error("run.demo_unfinished", what=("The run '{name}' has not finished (no final model to show)",
                                       "运行“{name}”还没有完成（没有可展示的最终模型）"),
          fix=("wait for it to finish, or pick a finished run from the Evaluate tab's list",
               "请等它完成，或从“评估”页的列表中选择一个已完成的运行")),

    # ---- the engine: the rows to train on (run.py, preference.py)
    error("engine.no_trainable_tokens",
          what=("No training row of '{dataset}' has an answer to learn: all {rows} rows have an empty output "
                "(nothing carries loss)", "“{dataset}”中没有一行训练数据有可学习的回答：全部 {rows} 行的输出都为空（没有任何内容计入损失）"),
          fix=("fill the dataset's output (answer) column, or check its columns in dataset_info.json",
               "填写数据集的输出（回答）列，或检查它在 dataset_info.json 中的列设置")),
    error("engine.no_preference_rows", what=("Dataset '{dataset}' has no preference row to train on",
                                             "数据集“{dataset}”中没有可以训练的偏好数据行"),
          fix=("check its chosen/rejected (or kto_tag) columns",
               "检查它的 chosen/rejected（或 kto_tag）列")),
    # ---- resuming from a checkpoint (run.py, reshard.py)
    error("engine.checkpoint_damaged",
          what=("Checkpoint '{checkpoint}' cannot be loaded: its files are damaged or incomplete ({error}: {detail})",
                "无法加载检查点“{checkpoint}”：它的文件已损坏或不完整（{error}：{detail}）"),
          fix=("start a new run, or resume from another checkpoint of this run (an older checkpoint-N folder)",
               "请开始一次新的运行，或从这次运行的另一个检查点继续（更早的 checkpoint-N 文件夹）")),
    error("engine.nothing_to_resume", what=("Nothing to resume in '{path}': no complete checkpoint",
                                            "“{path}”中没有可以继续的内容：没有完整的检查点"),
          fix=("start a new run, or lower save_steps so checkpoints are written sooner",
               "请开始一次新的运行，或调低 save_steps，让检查点更早写出"),
          page_fix=("start a new run, or " + _LOWER_SAVE_STEPS_PAGE[0],
                    "请开始一次新的运行，或" + _LOWER_SAVE_STEPS_PAGE[1])),
    error("engine.not_a_checkpoint", what=("'{path}' is not a complete checkpoint", "“{path}”不是一个完整的检查点"),
          fix=("pick a checkpoints/checkpoint-N folder", "选择一个 checkpoints/checkpoint-N 文件夹")),
    error("engine.reshard", what=("Cannot convert checkpoint '{checkpoint}' (saved by {saved} processes) for "
                                  "{world_size} processes",
                                  "无法把检查点“{checkpoint}”（由 {saved} 个进程保存）转换给 {world_size} 个进程使用"),
          why=("{detail}", "{detail}"),
          fix=("resume with {saved} processes (--nproc / --nnodes)",
               "用 {saved} 个进程继续训练（--nproc / --nnodes）"),
          page_fix=("resume with {saved} processes (Processes (cards) on the Settings tab)",
                    "用 {saved} 个进程继续训练（“设置”页的“进程数（显卡数）”）")),
    error("engine.reshard_wait", what=("Rank {rank} waited {wait_s:.0f}s for rank 0 to convert '{checkpoint}'",
                                       "进程 {rank} 等待进程 0 转换“{checkpoint}”已达 {wait_s:.0f} 秒"),
          fix=("put output_dir on storage every node shares",
               "把 output_dir 放在所有节点共享的存储上"),
          page_fix=("put the Run folder on storage every node shares",
                    "把“运行文件夹”放在所有节点共享的存储上")),
    # ---- the trainer's arguments: the DeepSpeed plan, report_to (arguments.py)
    error("engine.deepspeed_missing", what=("DeepSpeed config '{spec}' not found", "找不到 DeepSpeed 配置“{spec}”"),
          fix=("use one of {choices} or a .json path", "请使用 {choices} 之一，或一个 .json 文件的路径")),
    error("engine.deepspeed_json",
          what=("DeepSpeed config '{path}' is not valid JSON", "DeepSpeed 配置“{path}”不是有效的 JSON"),
          why=("{detail}", "{detail}"),
          fix=("fix the file", "改正这个文件")),
    error("engine.deepspeed_not_object", what=("DeepSpeed config '{path}' must be a JSON object, not a {kind}",
                                               "DeepSpeed 配置“{path}”必须是一个 JSON 对象，而不是{kind}"),
          fix=("start from presets/deepspeed/ds_z2.json",
               "请从 presets/deepspeed/ds_z2.json 开始改")),
    error("engine.report_to_unknown", what=("{f_report_to}: '{name}' is not a logger Trainer knows",
                                            "{f_report_to}：“{name}”不是 Trainer 认识的日志记录器"),
          fix=("use none or one of {loggers}", "请使用 none 或 {loggers} 之一")),
    error("engine.report_to_missing",
          what=("{f_report_to}: {name} needs the '{package}' package, which is not installed",
                "{f_report_to}：{name} 需要软件包“{package}”，但它没有安装"),
          fix=("pip install {package}, or set {f_report_to}: none",
               "`pip install {package}`，或设置{f_report_to}: none"),
          page_fix=("ask whoever runs the studio to install {package}, or set {f_report_to} "
                    "to none", "请运行本工作室的人安装“{package}”，或把{f_report_to}设为 none")),
    # ---- a multi-process run (launch.py) and disk offload (nvme.py)
    error("engine.peer_lost", what=("Lost contact with another process of this multi-process run (a node stopped, was "
                                    "killed, or the network between nodes failed)",
                                    "与这次多进程运行的另一个进程失去了联系（某个节点停止了、被终止了，或节点之间的网络出了故障）"),
          why=("Detail: {detail}", "详情：{detail}"),
          fix=("check that node's log, then start all nodes again with --resume last",
               "查看那个节点的日志，然后用 --resume last 重新启动所有节点"),
          page_fix=("check that node's log, then start all nodes again, resuming from the last "
                    "checkpoint", "查看那个节点的日志，然后重新启动所有节点，从最新的检查点继续")),
    *_NVME_ERRORS,

    # ---- the command line's own checks of its flags (cli/): what the page does with its fields
    error("cli.gpu_mem_auto", what=("{flag} auto found no GPU (nvidia-smi, amd-smi and rocm-smi are missing or failed)",
                                    "{flag} auto 没有找到 GPU（nvidia-smi、amd-smi 和 rocm-smi 都不存在或运行失败）"),
          fix=("give the card's memory in GB, e.g. --gpu-mem 24", "以 GB 为单位给出显卡的显存，例如 --gpu-mem 24"),
          page_fix=("give the card's memory in GB", "以 GB 为单位给出显卡的显存")),
    error("cli.ram_auto", what=("{flag} auto cannot read this machine's RAM size", "{flag} auto 无法读取本机的内存大小"),
          fix=("give it in GB, e.g. --ram 64", "以 GB 为单位给出，例如 --ram 64"),
          page_fix=("give it in GB", "以 GB 为单位给出")),
    error("cli.at_least_one", what=("{flag} must be at least 1 (got {got})", "{flag} 至少要为 1（实际是 {got}）"),
          fix=("give a positive number", "请给出一个正数")),
    error("cli.keep_adapter_alone", what=("{flag} only applies with {needs} 4 or 8", "{flag} 只能与 {needs} 4 或 8 一起使用"),
          fix=("add --quantize 4, or drop --keep-adapter (without --merge the adapter is exported as is)",
               "加上 --quantize 4，或去掉 --keep-adapter（不加 --merge 时适配器按原样导出）"),
          page_fix=("export with Format on the Evaluate tab: the page exports the adapter as is, or a merged model",
                    "在“评估”页用“格式”导出：页面按原样导出适配器，或导出合并后的模型")),
    error("cli.no_modelfile_alone", what=("{flag} only applies with {needs}", "{flag} 只能与 {needs} 一起使用"),
          fix=("add --gguf q8_0, or drop --no-modelfile", "加上 --gguf q8_0，或去掉 --no-modelfile"),
          page_fix=("set Format to GGUF q8_0 on the Evaluate tab", "在“评估”页把“格式”设为 GGUF q8_0")),
    error("cli.gguf_combined",
          what=("{flag} writes its own merged model and cannot be combined with {others} or {last}",
                "{flag} 会写出自己合并的模型，不能与 {others} 或 {last} 一起使用"),
          fix=("drop those flags (a GGUF export always merges the LoRA adapter)",
               "去掉那些选项（GGUF 导出总会合并 LoRA 适配器）")),
    error("cli.compare_quantized_task", what=("{flag} needs {needs}", "{flag} 需要 {needs}"),
          fix=("drop --task generate", "去掉 `--task generate`"),
          page_fix=("use Full vs quantized on the Evaluate tab (it checks labels, as the sentiment check does)",
                    "使用“评估”页的“完整模型与量化模型对比”（它和情感分类检查一样检查标签）")),
    error("cli.deploy_report_task", what=("{flag} needs {needs}", "{flag} 需要 {needs}"),
          fix=("drop --task generate (the report scores labels: use --task sentiment, the default)",
               "去掉 `--task generate`（报告给标签打分：请用默认的 --task sentiment）"),
          page_fix=("use the Deploy report on the Evaluate tab (it scores labels, as the sentiment check does)",
                    "使用“评估”页的“部署报告”（它和情感分类检查一样给标签打分）")),
    error("cli.deploy_report_alone", what=("{flag} runs alone", "{flag} 只能单独运行"),
          fix=("drop --compare-quantized / --compare-base / --predictions-out (the report already holds the 8-bit "
               "and NF4 rows)", "去掉 --compare-quantized / --compare-base / --predictions-out（报告中已经有 8 位和 "
                                "NF4 两行）"),
          page_fix=("make the Deploy report on the Evaluate tab on its own (it already holds the 8-bit and NF4 rows)",
                    "在“评估”页单独生成“部署报告”（报告中已经有 8 位和 NF4 两行）")),
    error("cli.deploy_report_run", what=("{flag} '{model}' is not a finished run folder", "{flag}“{model}”不是已完成运行的文件夹"),
          fix=("pass --model runs/<name>: a run whose training finished (config.yaml and its adapter/ or model/); "
               "the report exports that run's model in each form",
               "请传入 --model runs/<名字>：一次训练已完成的运行（有 config.yaml 以及 adapter/ 或 model/）；报告会把"
               "那次运行的模型导出为每一种形式"),
          page_fix=("pick a finished run on the Evaluate tab: the report exports that run's model in each form",
                    "在“评估”页选择一个已完成的运行：报告会把那次运行的模型导出为每一种形式")),
    error("cli.generate_input", what=("{flag} needs {prompt} or {data}", "{flag} 需要 {prompt} 或 {data}"),
          fix=("add one of them", "加上其中一个")),
    error("cli.feedback_run", what=("There is no run '{run}' in '{runs}'", "“{runs}”中没有运行“{run}”"),
          fix=("name a run folder of that workspace (python -m studio feedback list shows the runs with feedback)",
               "请给出那个工作区的一个运行文件夹（`python -m studio feedback list` 会列出有反馈的运行）"),
          page_fix=("pick a run on the Feedback tab", "在“反馈”页选择一个运行")),
    error("cli.feedback_action", what=("Unknown action '{action}'", "未知的操作“{action}”"),
          fix=("use {actions} or {last}", "请使用 {actions} 或 {last}")),
    error("cli.models_get_none", what=("Name a model to get", "请指定要获取的模型"),
          fix=("python -m studio models get NAME (or --all); the names: {names}",
               "`python -m studio models get 名字`（或 --all）；可用的名字：{names}"),
          page_fix=("pick a Base model on the Settings tab and press Download; the names: {names}",
                    "在“设置”页选择一个“基础模型”并按“下载”；可用的名字：{names}")),
    # ---- the training command's output_dir (cli/train.py): a folder that is not free to train into
    error("cli.output_is_file", what=("{f_output_dir} '{path}' is a file", "{f_output_dir}“{path}”是一个文件"),
          fix=("train into a folder: --set output_dir=NEW_FOLDER", "请训练到一个文件夹中：--set output_dir=新文件夹"),
          page_fix=("train into a folder: " + _NEW_FOLDER_PAGE[0], "请训练到一个文件夹中：" + _NEW_FOLDER_PAGE[1])),
    error("cli.output_foreign", what=("{f_output_dir} '{path}' holds files the studio did not make ({files})",
                                      "{f_output_dir}“{path}”中有不是本工作室生成的文件（{files}）"),
          **_FOREIGN_FILES_FIX),
    error("cli.output_foreign_more",
          what=("{f_output_dir} '{path}' holds files the studio did not make ({files} and {more} more)",
                "{f_output_dir}“{path}”中有不是本工作室生成的文件（{files} 等，另有 {more} 个）"),
          **_FOREIGN_FILES_FIX),
    error("cli.output_training", what=("{f_output_dir} '{path}' holds a run that is training now (pid {pid})",
                                       "{f_output_dir}“{path}”中有一次正在训练的运行（进程号 {pid}）"),
          fix=("train into a new folder with --set output_dir=NEW_FOLDER, or stop that run first",
               "请用 --set output_dir=新文件夹 训练到一个新文件夹中，或先停止那次运行"),
          page_fix=(_NEW_FOLDER_PAGE[0] + ", or stop that run first", _NEW_FOLDER_PAGE[1] + "，或先停止那次运行")),
    error("cli.output_has_run",
          what=("{f_output_dir} '{path}' already holds a run ({state})", "{f_output_dir}“{path}”中已经有一次运行（{state}）"),
          **_HAS_RUN_FIX),
    error("cli.output_has_run_step", what=("{f_output_dir} '{path}' already holds a run ({state} at step {step})",
                                           "{f_output_dir}“{path}”中已经有一次运行（{state}，在第 {step} 步）"),
          **_HAS_RUN_FIX),
]
