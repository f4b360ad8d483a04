# Sourced by the device scripts (run on the GPU machine from the repository
# root with .device-gpu/ carried): library paths for the packed binaries,
# CUDA and cuDNN, and where ptxbench finds its data.
root="$(pwd)"
out="${OUT:-$root/out}"
mkdir -p "$out"
# cuDNN from the pip package (the one torch uses) where there is one.
cudnn="$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0] + "/lib")' 2>/dev/null || true)"
cuda=/usr/local/cuda
export LD_LIBRARY_PATH="$root/.device-gpu:$cuda/lib64:$cuda/extras/CUPTI/lib64:$cuda/targets/x86_64-linux/lib:${cudnn}"
export PATH="$cuda/bin:$PATH"
export PTXBENCH_TEST_BIN_DIR="$root/.device-gpu"
export PTXBENCH_DATA_DIR="$root"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
