#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# The scheduler samples under deploy/ name vgmem's mdev types as the module
# makes them: each type id (vgmem-<sysfs name>) and each type name (the
# `name` file KubeVirt's mdevNameSelector matches) in deploy/nova and
# deploy/kubevirt must be in host-module/linux/registry.c's type table, so
# a renamed type cannot leave the samples selecting nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "test_deploy_samples: FAIL: $*" >&2; exit 1; }
table=$(sed -n '/vgk_type_desc\[VGK_NR_TYPES\] = {/,/^};/p' host-module/linux/registry.c)
[ -n "$table" ] || fail "no vgk_type_desc table in registry.c"
ids=$(sed -n 's/^[[:space:]]*{ "\([^"]*\)", "\([^"]*\)",.*/vgmem-\1/p' <<<"$table")
names=$(sed -n 's/^[[:space:]]*{ "\([^"]*\)", "\([^"]*\)",.*/\2/p' <<<"$table")
[ "$(wc -l <<<"$ids")" -ge 4 ] || fail "could not read the type table: $table"

checked=0
while read -r t; do
	grep -qx "$t" <<<"$ids" || fail "deploy/ names type id '$t', the module has: $(echo $ids)"
	checked=$((checked + 1))
done < <(grep -ho 'vgmem-[0-9]*g' deploy/nova/nova-compute.conf deploy/kubevirt/kubevirt-vgmem.yaml | sort -u)
while read -r n; do
	grep -qxF "$n" <<<"$names" || fail "deploy/kubevirt selects name '$n', the module's names are: $(tr '\n' ',' <<<"$names")"
	checked=$((checked + 1))
done < <(sed -n 's/.*mdevNameSelector: "\([^"]*\)".*/\1/p' deploy/kubevirt/kubevirt-vgmem.yaml)
[ $checked -ge 2 ] || fail "found no type ids or names in the samples"
echo "test_deploy_samples: OK: $checked type ids and names in deploy/ are the module's"
