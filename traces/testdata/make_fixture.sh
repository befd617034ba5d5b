#!/usr/bin/env bash
# Regenerates transformer_cpu.json: installs Debian's CPU PyTorch (python3-torch 1.13) and profiles
# one training step of a two-layer transformer (profile_transformer.py). Needs root for apt-get.
set -euo pipefail
cd "$(dirname "$0")"
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	apt-get update
	apt-get install -y python3-torch
fi
/usr/bin/python3 profile_transformer.py transformer_cpu.json
