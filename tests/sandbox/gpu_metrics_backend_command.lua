-- Attempt: smuggle a shell command into the GPU tool's command line through the backend name,
-- hoping gpu_metrics pastes it into what it runs on the host.
-- Why it must fail: a backend is one of three names; scripts never supply any part of a command.
-- expect: error option 'backend' must be "auto", "amd-smi", "rocm-smi" or "nvidia-smi"
gpu_metrics.read(gpu_metrics.localhost(), { backend = "nvidia-smi; touch /tmp/runara-pwned" })
