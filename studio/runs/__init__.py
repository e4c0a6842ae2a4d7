"""Run folders and the processes that fill them: the folder contract (run_dir), the job runner
(jobs: child process, queue, re-attach), process facts (processes), loss plots (plots)."""
