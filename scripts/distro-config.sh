#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# distro-config.sh debian DEBIAN_CONFIG [TABLE]
# distro-config.sh built KERNEL_CONFIG [TABLE]
#
# Checks the table of the distribution's module options (TABLE, by default
# kernel/distro.config; its "#=" lines say where each row comes from):
#   debian: every row under "#= debian" has the value it has in
#           DEBIAN_CONFIG, Debian's own configuration of the kernel (an
#           unset row must be unset or absent there), and every other row
#           a value that is not Debian's;
#   built:  every row has its value in KERNEL_CONFIG, the .config of a
#           kernel built with the table.
# Prints one line per disagreement and exits 1 if there is any.
source "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || { echo "usage: distro-config.sh debian|built CONFIG [TABLE]" >&2; exit 2; }
mode=$1 config=$2 table=${3:-$MLX_EXT_ROOT/kernel/distro.config}
case "$mode" in debian | built) ;; *) die "distro-config: mode $mode: it is debian or built" ;; esac
[ -f "$config" ] || die "distro-config: no configuration file $config"
[ -f "$table" ] || die "distro-config: no table $table"

# rows: "SOURCE NAME VALUE" per option of the table, VALUE "n" for "is not
# set"; SOURCE is the first word after the last "#=" above the row.
rows() {
	awk '
		/^#= / { src = $2; sub(/:$/, "", src); next }
		/^CONFIG_[A-Z0-9_]+=/ { i = index($0, "="); print s(), substr($0, 1, i - 1), substr($0, i + 1); next }
		/^# CONFIG_[A-Z0-9_]+ is not set$/ { print s(), $2, "n" }
		function s() { return src == "" ? "-" : src }
	' "$1"
}
# value NAME: NAME's value in $config, "n" when unset or absent.
value() {
	local v
	v=$(sed -n "s/^$1=//p" "$config" | tail -n1)
	echo "${v:-n}"
}

bad=0 n=0
while read -r src name want; do
	[ "$src" != - ] || { echo "$table: $name has no '#=' source above it"; bad=1; continue; }
	case "$src" in debian | ubuntu | ours) ;; *)
		echo "$table: $name: unknown source '$src' (debian, ubuntu or ours)"
		bad=1
		continue
		;;
	esac
	got=$(value "$name")
	if [ "$mode" = debian ] && [ "$src" != debian ]; then
		# A row that is not Debian's must differ from Debian's.
		[ "$got" != "$want" ] && continue
		echo "$name: tagged $src, but Debian's file has $got too: tag it debian"
		bad=1
		continue
	fi
	n=$((n + 1))
	[ "$got" = "$want" ] && continue
	echo "$name: the table says $want, $(basename "$config") has $got"
	bad=1
done < <(rows "$table")
((n > 0)) || { echo "$table: no rows to check in $mode mode"; bad=1; }
exit $bad
