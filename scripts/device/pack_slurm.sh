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
# Plugins, but not PMIx's (it needs a PMIx library and only logs errors here),
# nor those of services the test does not run (REST API, databases, Lua, GPU
# energy and burst buffers): the pack travels with the GPU run, 64 MiB in all.
plugins=$(dirname "$(dpkg -L slurm-wlm-basic-plugins | grep '/auth_munge\.so$')")
cp -L "$plugins"/*.so "$dest/lib/slurm-wlm/"
(cd "$dest/lib/slurm-wlm" && rm -f mpi_pmix*.so mpi_pmi2.so libslurm_pmi.so openapi_*.so \
  select_cons_res.so select_linear.so accounting_storage_mysql.so accounting_storage_slurmdbd.so \
  jobcomp_elasticsearch.so jobcomp_lua.so jobcomp_mysql.so jobcomp_kafka.so jobcomp_script.so \
  burst_buffer_*.so acct_gather_profile_hdf5.so acct_gather_profile_influxdb.so \
  acct_gather_interconnect_ofed.so acct_gather_energy_ipmi.so acct_gather_energy_rsmi.so \
  acct_gather_energy_xcc.so ext_sensors_rrd.so gpu_nvml.so gpu_rsmi.so gpu_oneapi.so \
  cli_filter_lua.so job_submit_lua.so node_features_*.so)
# glibc comes from the other machine; everything else that resolves here goes
# to lib/deps (libmunge among them).
skip='^(linux-vdso|libc\.|libm\.|ld-linux|libdl\.|libpthread|librt\.|libresolv\.|libslurmfull)'
for f in "$dest"/bin/* "$dest"/sbin/* "$dest"/lib/slurm-wlm/*.so; do
  ldd "$f" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $skip ]] || cp -n -L "$path" "$dest/lib/deps/"
  done
done
# iproute2's ip and ss (the GPU machine has neither): the Slurm test looks
# for free ports with ss, the partition test builds its network with ip.
# Put DEST/bin first on PATH and DEST/lib/deps last on LD_LIBRARY_PATH.
for tool in ip ss; do
  cp -L "$(command -v "$tool")" "$dest/bin/"
  ldd "$dest/bin/$tool" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $skip ]] || cp -n -L "$path" "$dest/lib/deps/"
  done
done
du -sh "$dest"
