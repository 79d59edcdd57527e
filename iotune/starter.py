"""The commented starter config that ``iotune init`` writes."""

STARTER_CONFIG = """\
# iotune configuration. Relative paths are relative to this file.
# Check it into git next to your job scripts. Full reference: iotune --help, README.md.
schema_version: 1

system:
  name: local                 # a label stored with every measurement
  scratch: /tmp               # output files go ONLY under here (a fresh subdirectory per run,
                              # deleted afterwards); on Lustre, use your scratch file system
  launcher: mpiexec           # mpiexec | srun | template
  # launcher_template: "aprun -n {ranks} -N {ranks_per_node} {command}"
  cores_per_node: 2           # ranks per node; sets the node count of each scale
  # ost_count: 156            # Lustre OSTs (lfs df); stripe_count may not exceed it
  aggregators_per_node: 2     # cb_nodes may not exceed nodes x this
  timeout: 10m                # a run taking longer is killed and recorded as failed

store: iotune-store.jsonl     # append-only measurements (one JSON line each)

kernel:
  name: vpic                  # vpic | ior
  args:
    particles_per_rank: 1048576   # 32 bytes per particle: 32 MiB per rank
    timesteps: 1
    fsync: true                   # keep the page cache out of the timing

# The settings to search, each with its allowed values. Sizes accept K/M/G/KiB/MiB/GiB.
space:
  cb_nodes: [1, 2]
  cb_buffer_size: [1MiB, 4MiB, 16MiB]
  romio_cb_write: [enable, disable]
  # stripe_count: [1, 4, 16, 64]   # Lustre only
  # stripe_size: [1MiB, 4MiB, 16MiB]

train:
  repetitions: 2
  seed: 1
  scales:
    - {cores: 2, design: full}
    - {cores: 4, design: lhs, runs: 6}

tune:
  top_k: 20                   # configurations kept by the model (prune)
  top_k_refit: 10             # new ones run after refitting
  refit_rounds: 1
  repetitions: 2              # per configuration; ranked by the statistic below
  statistic: median
  max_terms: 7
"""
