#!/usr/bin/env bash
# Developer tool: copies this machine's Slurm and munge (Debian 12 packages)
# into DEST, for tests/slurm_test.sh on a machine without them (the GPU
# machine): PTXB_SLURM_PREFIX=DEST tests/slurm_test.sh BUILD_DIR.
#   DEST/bin, DEST/sbin       the commands and daemons the test uses
#   DEST/lib/slurm-wlm        libslurmfull and the plugins (slurm.conf's PluginDir)
#   DEST/lib/deps             the non-glibc libraries they need, for what the
#                             other machine lacks (the test puts them last)
# Usage: scripts/device/pack_slurm.sh DEST
set -euo pipefail
dest=${1:?usage: pack_slurm.sh DEST}
for pkg in slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge libmunge2; do
  dpkg -s "$pkg" > /dev/null 2>&1 || { echo "$pkg is not installed (scripts/setup.sh)" >&2; exit 1; }
done
rm -rf "$dest" && mkdir -p "$dest/bin" "$dest/sbin" "$dest/lib/slurm-wlm" "$dest/lib/deps"
for pair in slurmctld:slurmctld slurmd:slurmd slurmd:slurmstepd munge:munged; do
  path=$(dpkg -L "${pair%%:*}" | grep -E "/sbin/${pair#*:}(-wlm)?\$" | head -1)
  [[ -n $path ]] || { echo "no ${pair#*:} in package ${pair%%:*}" >&2; exit 1; }
  cp -L "$path" "$dest/sbin/${pair#*:}"
done
for cmd in sbatch srun squeue sinfo scancel scontrol; do cp -L "/usr/bin/$cmd" "$dest/bin/"; done
# Plugins, but not PMIx's: it needs a PMIx library and only logs errors here.
plugins=$(dirname "$(dpkg -L slurm-wlm-basic-plugins | grep '/auth_munge\.so$')")
cp -L "$plugins"/*.so "$dest/lib/slurm-wlm/"
rm -f "$dest"/lib/slurm-wlm/mpi_pmix*.so
# glibc comes from the other machine; everything else that resolves here goes
# to lib/deps (libmunge among them).
skip='^(linux-vdso|libc\.|libm\.|ld-linux|libdl\.|libpthread|librt\.|libresolv\.|libslurmfull)'
for f in "$dest"/bin/* "$dest"/sbin/* "$dest"/lib/slurm-wlm/*.so; do
  ldd "$f" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $skip ]] || cp -n -L "$path" "$dest/lib/deps/"
  done
done
du -sh "$dest"
