# Waits until the roles this pod depends on answer; see Container in container.go.
# POSIX sh: runs under busybox ash (the wait image) and dash. Writes no files.
#
# WAIT_TARGETS          space-separated dependencies: host:port (or [v6addr]:port)
#                       must accept a TCP connection, a bare host must resolve.
# WAIT_TIMEOUT_SECONDS  whole seconds before giving up with exit status 124; 0 or
#                       unset waits forever.
# WAIT_REPORT_SECONDS   seconds between progress lines (default 10).
#
# Exit status: 0 all ready, 124 timed out (wait.TimeoutExitCode: the controller
# recognises a timed-out wait by it), 2 bad settings, 143 terminated (SIGTERM).

# As PID 1 the shell would ignore SIGTERM and hold pod deletion for the whole
# grace period.
trap 'exit 143' TERM
trap 'exit 130' INT
# Targets are words, never globs; nc's "HOST PORT -e PROG" needs GNU argument
# permutation where nc is busybox's small variant (Debian's build).
set -f
unset POSIXLY_CORRECT

timeout_s=${WAIT_TIMEOUT_SECONDS:-0}
report_s=${WAIT_REPORT_SECONDS:-10}
case $timeout_s in
'' | *[!0-9]*)
	echo "WAIT_TIMEOUT_SECONDS must be a whole number of seconds, not '$timeout_s'" >&2
	exit 2
	;;
esac
# At most 9 digits: the deadline in centiseconds stays far inside the shell's
# 64-bit arithmetic (the plugins write at most a year, 31536000).
if [ ${#timeout_s} -gt 9 ]; then
	echo "WAIT_TIMEOUT_SECONDS must be at most 999999999, not '$timeout_s'" >&2
	exit 2
fi
case $report_s in
'' | *[!0-9]* | 0)
	echo "WAIT_REPORT_SECONDS must be a positive whole number of seconds, not '$report_s'" >&2
	exit 2
	;;
esac

pending=
total=0
for t in $WAIT_TARGETS; do
	# A target is a host name or address, never an option of nc or wget.
	case $t in
	-*)
		echo "WAIT_TARGETS: '$t' is not a host or host:port" >&2
		exit 2
		;;
	esac
	pending="$pending $t"
	total=$((total + 1))
done
pending=${pending# }
if [ "$total" -eq 0 ]; then
	echo "no dependencies to wait for"
	exit 0
fi

# now sets cs to a monotonic clock in centiseconds (/proc/uptime needs no
# process; date is the fallback).
now() {
	if read -r up _ 2>/dev/null </proc/uptime; then
		cs=$((${up%.*} * 100 + 1${up#*.} - 100))
	else
		cs=$(($(date +%s) * 100))
	fi
}

# ready succeeds if dependency $1 answers now: a TCP connect within 1 s to
# host:port, or a name lookup through the libc resolver (which, unlike busybox
# nslookup, honours /etc/hosts and the search path of the pod's resolv.conf:
# nslookup skips it for dotted names such as job-master-0.job). wget prints
# "Connecting to" only once the name has resolved; an [IPv6] literal needs no
# lookup. nc -z would do for TCP, but Debian's busybox nc lacks it; -e true
# (exit 0 right after connecting) works in both of busybox's nc variants.
ready() {
	case $1 in
	\[*\]:*)
		h=${1%]:*}
		h=${h#\[}
		p=${1##*]:}
		;;
	\[*\]) return 0 ;;
	*:*)
		h=${1%:*}
		p=${1##*:}
		;;
	*)
		h=$1
		p=
		;;
	esac
	if [ -n "$p" ]; then
		nc -w 1 "$h" "$p" -e true </dev/null >/dev/null 2>&1
		return
	fi
	case $(timeout 2 wget -Y off --spider "http://$h:1/" 2>&1 </dev/null >/dev/null) in
	*"Connecting to "*) return 0 ;;
	esac
	return 1
}

# count sets what to "N of TOTAL dependencies" ("1 dependency" if TOTAL is 1).
count() {
	if [ "$total" -eq 1 ]; then
		what="1 dependency"
	else
		what="$1 of $total dependencies"
	fi
}

# shortlist sets list to the first 5 pending dependencies and "and N more".
shortlist() {
	list=
	i=0
	for t in $pending; do
		i=$((i + 1))
		if [ "$i" -le 5 ]; then
			list="$list $t"
		fi
	done
	if [ "$i" -gt 5 ]; then
		list="$list and $((i - 5)) more"
	fi
	list=${list# }
}

if [ "$timeout_s" -gt 0 ]; then
	limit="timeout ${timeout_s}s"
else
	limit="no timeout"
fi
now
start=$cs
reported=
while :; do
	still=
	n=0
	for t in $pending; do
		if ! ready "$t"; then
			still="$still $t"
			n=$((n + 1))
		fi
	done
	pending=${still# }
	now
	elapsed=$((cs - start))
	if [ "$n" -eq 0 ]; then
		if [ "$total" -eq 1 ]; then
			echo "1 dependency ready after $((elapsed / 100))s"
		else
			echo "all $total dependencies ready after $((elapsed / 100))s"
		fi
		exit 0
	fi
	count "$n"
	if [ "$timeout_s" -gt 0 ] && [ "$elapsed" -ge $((timeout_s * 100)) ]; then
		echo "timed out after $((elapsed / 100))s waiting for $what: $pending" >&2
		exit 124
	fi
	if [ -z "$reported" ] || [ $((elapsed - reported)) -ge $((report_s * 100)) ]; then
		shortlist
		echo "waiting for $what: $list ($((elapsed / 100))s elapsed, $limit)"
		reported=$elapsed
	fi
	# Most dependencies answer within seconds of the pod starting: checking
	# every 0.25 s then releases the pod sooner (issue 28: 0.6 s after the
	# answer with a 1 s poll). After 10 s, once a second bounds the DNS
	# queries and connects of a Job whose pods wait long.
	if [ "$elapsed" -lt 1000 ]; then
		sleep 0.25
	else
		sleep 1
	fi
done
