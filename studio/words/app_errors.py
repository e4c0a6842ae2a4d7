"""The words of the errors of the studio's application layer: the page's path checks and the workspace chosen at
launch (studio/app/paths.py, context.py), the page's uploads and model download (uploads.py, gguf_upload.py,
model_download.py), "Improve this run" (app/improve.py, improve_page.py), the web server's
flags and logins (app/server_flags.py), the time budget of the derived settings (studio/autoconfig.py) and a link
out of the studio's folders (studio/safe_files.py).

Each code: what / why / fix in (English, Chinese); ``fix`` is the command line's, ``page_fix`` the page's where
they differ (see studio/words/errors.py for the values and the rule). A literal brace is doubled. The server's
errors speak to whoever starts it; a flag they name in what is wrong is a value (``{flag}``), so that the same
words serve every flag, and their page fixes ask whoever runs the studio.
"""
from __future__ import annotations

from typing import Any

from .entry import error

_OPERATOR = ("ask whoever runs the studio to start it with a login and password",
             "请运行本工作室的人设置登录名和密码后再启动它")
_NO_PASSWORD_WHY = ("Anyone who can open the page could train, read the workspace and run models",
                    "任何能打开页面的人都可以训练、读取工作区并运行模型")
_NO_PASSWORD_FIX = ("add --auth USER:PASS or --auth-file FILE; or pass --no-auth if everyone who can reach it may use "
                    "this machine's GPU, files and models",
                    "加上 --auth 用户名:密码 或 --auth-file 文件；如果每个能访问它的人都可以使用本机的 GPU、文件和模型，"
                    "也可以传 --no-auth")
_LINK_FIX = ("remove the link, or copy the file itself into the folder; the studio never reads, copies or exports "
             "through a link that leads out of its folders",
             "请删除这个链接，或把文件本身复制到该文件夹中；本工作室从不通过指向其文件夹之外的链接读取、复制或导出")
_LINK_WHAT = " '{name}' holds a link to a file outside the studio's folders ({names})"
_LINK_ZH = "“{name}”中有一个指向本工作室文件夹之外的链接（{names}）"
_COMPARE_PAGE = ("pick a run that the Improve this run button made", "请选择由“改进这次运行”按钮生成的运行")


ENTRIES: list[Any] = [
    # ---- the page's paths and the run it starts (paths.py)
    error("app.nvme_root",
          what=("{f_offload_nvme_path} can only be a folder the operator allowed, and none was allowed",
                "{f_offload_nvme_path}只能是运行本工作室的人允许的文件夹，而目前没有允许任何文件夹"),
          fix=("start the studio with --nvme-root DIR (a folder on a fast local disk), then pick a folder inside it; "
               "or choose another DeepSpeed setting",
               "用 --nvme-root DIR（快速本地磁盘上的一个文件夹）启动本工作室，再在其中选择一个文件夹；或选择另一个 DeepSpeed 设置"),
          page_fix=("ask whoever runs the studio to allow an NVMe folder, or choose another DeepSpeed setting",
                    "请运行本工作室的人允许一个 NVMe 文件夹，或选择另一个 DeepSpeed 设置")),
    error("app.remote_code", what=("Trust remote code is off for this studio", "本工作室关闭了“信任远程代码”"),
          fix=("untick Trust remote code; whoever runs the server can allow it by starting it with "
               "'python launch.py --trust-remote-code' (the model's own code would run on the server)",
               "取消勾选“信任远程代码”；运行服务器的人可以用“python launch.py --trust-remote-code”启动它来允许"
               "（模型自带的代码会在服务器上运行）"),
          page_fix=("untick Trust remote code on the Settings tab; only whoever runs the studio can allow a model's "
                    "own code to run on the server",
                    "在“设置”页取消勾选“信任远程代码”；只有运行本工作室的人才能允许模型自带的代码在服务器上运行")),
    error("app.model_missing", what=("Model folder '{model}' does not exist", "模型文件夹“{model}”不存在"),
          fix=("pick an existing folder with config.json, a hub id such as Qwen/Qwen2.5-0.5B, or '{demo}'",
               "请选择一个含 config.json 的现有文件夹、一个模型中心的 id（如 Qwen/Qwen2.5-0.5B），或“{demo}”")),
    error("app.checkpoint_incomplete", what=("'{path}' is not a complete checkpoint", "“{path}”不是一个完整的检查点"),
          fix=("pick a checkpoints/checkpoint-N folder of a run, or 'last'",
               "请选择某个运行的 checkpoints/checkpoint-N 文件夹，或填 'last'")),
    # ---- what the page takes in: an upload over its limit (uploads.py, gguf_upload.py), a model to download
    # (model_download.py); a GGUF of an architecture transformers cannot read is model.gguf_arch
    error("upload.too_big",
          what=("'{name}' is {mb:.1f} MB, over this studio's limit of {limit:g} MB for data and settings files",
                "“{name}”有 {mb:.1f} MB，超过了本工作室对数据和设置文件的上限 {limit:g} MB"),
          fix=("use a smaller file (split it, or keep only the columns you need), or ask whoever started the studio "
               "to raise its upload limit",
               "请换用更小的文件（拆分，或只保留需要的列），或请启动本工作室的人调高上传上限")),
    error("upload.not_gguf", what=("'{name}' is not a .gguf file", "“{name}”不是 .gguf 文件"),
          fix=("upload a model file whose name ends in .gguf (llama.cpp format)",
               "请上传文件名以 .gguf 结尾的模型文件（llama.cpp 格式）")),
    error("upload.gguf_too_big", what=("'{name}' is {mb:.1f} MB, over this studio's upload limit of {limit:g} MB",
                                       "“{name}”有 {mb:.1f} MB，超过了本工作室的上传上限 {limit:g} MB"),
          fix=("put the file in the workspace folder and type its path in Model, or ask whoever started the studio "
               "to raise its upload limit",
               "请把文件放进工作区文件夹并在“模型”中输入路径，或请启动本工作室的人调高上传上限")),
    error("app.download_not_builtin", what=("'{name}' is not a built-in model, so there is nothing to download here",
                                            "“{name}”不是内置模型，这里没有可下载的内容"),
          fix=("pick smollm2-135m-instruct or gemma3-270m under Base model",
               "在“基础模型”中选择 smollm2-135m-instruct 或 gemma3-270m")),
    # ---- the workspace chosen at launch (context.py)
    error("app.workspace_unwritable",
          what=("The workspace folder '{path}' cannot be created ({detail})", "无法创建工作区文件夹“{path}”（{detail}）"),
          fix=("start the studio with --workspace DIR on a disk you can write to",
               "用 --workspace DIR 指定一个你能写入的磁盘上的文件夹来启动本工作室"),
          page_fix=("ask whoever runs the studio to start it with a workspace folder on a disk it can write to",
                    "请运行本工作室的人把工作区文件夹放在可写入的磁盘上再启动它")),
    # ---- an owner action asked for by a viewer login (studio/ui/handlers.py, owner_action; studio/web/guard.py)
    error("app.owner_only",
          what=("The login '{user}' is a viewer: it can look at runs and results and try the models, but it cannot "
                "start, stop, change, export or delete anything",
                "登录名“{user}”是查看者：可以查看运行和结果、试用模型，但不能启动、停止、修改、导出或删除任何内容"),
          fix=("ask an owner of this studio to do it, or log in as an owner",
               "请让本工作室的所有者来做，或用所有者的登录名登录")),
    # ---- the web server's logins and flags (server_flags.py)
    error("server.login_shape", what=("A login must look like USER:PASS or USER:PASS:ROLE",
                                      "登录信息必须写成“用户名:密码”或“用户名:密码:角色”的形式"),
          fix=("write it as --auth alice:secret (or one USER:PASS[:owner|viewer] per line in the auth file)",
               "请写成 --auth 用户名:密码（或在认证文件中每行写一个“用户名:密码”，末尾可加 ':owner' 或 ':viewer' 表示角色）"),
          page_fix=("ask whoever runs the studio to correct its logins", "请运行本工作室的人改正登录信息")),
    error("server.auth_file_missing", what=("Auth file '{path}' does not exist", "认证文件“{path}”不存在"),
          fix=("create it with one USER:PASS per line", "请创建它，每行写一个“用户名:密码”")),
    error("server.auth_file_unreadable",
          what=("Auth file '{path}' cannot be read ({detail})", "无法读取认证文件“{path}”（{detail}）"),
          fix=("save it as UTF-8 text with one USER:PASS or USER:PASS:ROLE per line, readable by the user who starts "
               "the studio", "请把它存为 UTF-8 文本，每行一个“用户名:密码”或“用户名:密码:角色”，并让启动本工作室的用户能读取它")),
    error("server.auth_file_empty", what=("Auth file '{path}' has no logins", "认证文件“{path}”中没有登录信息"),
          fix=("add one USER:PASS per line", "请每行加一个“用户名:密码”")),
    error("server.auth_conflict", what=("{flag} contradicts {others}", "{flag} 与 {others} 相互矛盾"),
          fix=("pass one or the other", "请只传其中一个")),
    error("server.no_password_share", what=("Refusing to start without a password on a public {flag} link",
                                            "拒绝在没有密码的情况下通过公开的 {flag} 链接启动"),
          why=_NO_PASSWORD_WHY,
          fix=_NO_PASSWORD_FIX,
          page_fix=_OPERATOR),
    error("server.no_password_host",
          what=("Refusing to start without a password on {flag} {host} (reachable from other machines)",
                "拒绝在没有密码的情况下以 {flag} {host} 启动（其他机器可以访问它）"),
          why=_NO_PASSWORD_WHY,
          fix=_NO_PASSWORD_FIX,
          page_fix=_OPERATOR),
    error("server.flag_not_positive",
          what=("{flag} must be a number above 0 (got {value:g})", "{flag} 必须是大于 0 的数（实际是 {value:g}）"),
          fix=("use e.g. {flag} {example:g}", "例如使用 {flag} {example:g}")),
    error("server.port_range",
          what=("{flag} must be between 1 and 65535 (got {port})", "{flag} 必须在 1 到 65535 之间（实际是 {port}）"),
          fix=("use e.g. --port 7860", "例如使用 --port 7860"),
          page_fix=("ask whoever runs the studio to pick a port between 1 and 65535",
                    "请运行本工作室的人选择 1 到 65535 之间的端口")),
    error("server.port_in_use", what=("Port {port} on {host} is already in use", "{host} 上的端口 {port} 已被占用"),
          fix=("stop the other program (or studio) using it, or pick another port with --port",
               "请停止占用它的其他程序（或工作室），或用 --port 选择另一个端口"),
          page_fix=("stop the other program (or studio) using it, or ask whoever runs the studio to pick another "
                    "port", "请停止占用它的其他程序（或工作室），或请运行本工作室的人选择另一个端口")),
    error("server.cannot_listen", what=("Cannot listen on {host}:{port} ({detail})", "无法在 {host}:{port} 上监听（{detail}）"),
          fix=("check --host (an address of this machine) and --port", "请检查 --host（须是本机的一个地址）和 --port"),
          page_fix=("ask whoever runs the studio to check its address (one of this machine's) and port",
                    "请运行本工作室的人检查地址（须是本机的地址）和端口")),
    # ---- "Improve this run" (improve.py, improve_page.py)
    error("improve.no_run", what=("There is no run '{name}' in '{folder}'", "“{folder}”中没有名为“{name}”的运行"),
          fix=("name a finished run of that workspace (python -m studio feedback list shows the runs with feedback)",
               "请指定该工作区中一个已完成的运行（'python -m studio feedback list' 会列出有反馈的运行）"),
          page_fix=("pick a run under Finished run with accepted feedback on the Train tab",
                    "请在“训练”页的“有已接受反馈的已完成运行”中选择一个运行")),
    error("improve.none_picked", what=("No run is picked", "没有选择运行"),
          fix=("pick a finished run with accepted feedback", "请选择一个有已接受反馈的已完成运行")),
    error("improve.run_exists", what=("Run '{name}' already exists", "运行“{name}”已存在"),
          fix=("name the improving run something new (--name NEW)", "请给改进后的运行起一个新名字（--name 新名字）"),
          page_fix=("improve it again: the page picks a new name", "再改进一次：页面会选一个新名字")),
    error("improve.not_improved", what=("Run '{name}' was not made by 'Improve this run' (no improved_from.json)",
                                        "运行“{name}”不是由“改进这次运行”生成的（没有 improved_from.json）"),
          fix=("pick a run that 'feedback improve' or the Improve button made",
               "请选择由 'feedback improve' 命令或“改进这次运行”按钮生成的运行"),
          page_fix=_COMPARE_PAGE),
    error("improve.unfinished", what=("Run '{name}' has not finished training", "运行“{name}”还没有训练完"),
          fix=("wait for it to finish, then compare", "请等它训练完再比较")),
    error("improve.old_gone",
          what=("The run it improved, '{name}', is gone or unfinished", "它所改进的运行“{name}”已不存在或还没有完成"),
          fix=("compare only while both runs are in the runs folder", "只有两个运行都在 runs 文件夹中时才能比较")),
    error("improve.no_rows", what=("There are no rows to compare the runs on", "没有可以用来比较这两个运行的行"),
          fix=("the old run kept no held-out rows and the feedback dataset is gone",
               "旧运行没有保留验证行，反馈数据集也已不存在")),
    # ---- the derived settings (autoconfig.py)
    error("autoconfig.budget_unknown", what=("Time budget '{budget}' is not known", "未知的时间预算“{budget}”"),
          fix=("use one of: {choices}", "请使用其中之一：{choices}")),
    # ---- a link out of the studio's folders (safe_files.py): the folder's kind is the code
    error("files.link_out", what=("The folder" + _LINK_WHAT, "文件夹" + _LINK_ZH), fix=_LINK_FIX),
    error("files.link_out_run", what=("The run folder" + _LINK_WHAT, "运行文件夹" + _LINK_ZH), fix=_LINK_FIX),
    error("files.link_out_model", what=("The model folder" + _LINK_WHAT, "模型文件夹" + _LINK_ZH), fix=_LINK_FIX),
    # ---- "Improve this run" makes its datasets under the new run's name; one that exists is someone's, never replaced
    error("improve.dataset_taken", what=("A dataset named '{name}' exists already (in {info})",
                                         "已经有一个名为“{name}”的数据集（在 {info} 中）"),
          fix=("give the improved run another name (--name NEW)", "请给改进后的运行另取一个名字（--name 新名字）"),
          page_fix=("rename or remove that dataset, then press Improve again",
                    "请重命名或删除该数据集，然后再次点击“改进这次运行”")),
]
