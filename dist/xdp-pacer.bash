# bash completion for xdp-pacer(8)
_xdp_pacer()
{
	local cur prev verb i opts
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	verb=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) verb=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [ -z "$verb" ]; then
		COMPREPLY=($(compgen -W "load unload status set deny exempt stats query model gen record top events analyze exporter -v --verbose -V --version --help" -- "$cur"))
		return
	fi
	case $prev in
	--config|-o|--output|--report|--pcap)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--policy) COMPREPLY=($(compgen -W "pace quiet" -- "$cur")); return ;;
	--malformed) COMPREPLY=($(compgen -W "pass drop" -- "$cur")); return ;;
	--layout) COMPREPLY=($(compgen -W "rows blocked" -- "$cur")); return ;;
	--placement) COMPREPLY=($(compgen -W "auto percpu shared" -- "$cur")); return ;;
	--clock) COMPREPLY=($(compgen -W "cached coarse precise" -- "$cur")); return ;;
	--mode) COMPREPLY=($(compgen -W "enforce observe" -- "$cur")); return ;;
	--deny-mode) COMPREPLY=($(compgen -W "global enforce observe" -- "$cur")); return ;;
	--xdp-mode) COMPREPLY=($(compgen -W "native skb" -- "$cur")); return ;;
	--format) COMPREPLY=($(compgen -W "text json prometheus" -- "$cur")); return ;;
	--dist) COMPREPLY=($(compgen -W "uniform zipf spoofed mix heavy" -- "$cur")); return ;;
	--by) COMPREPLY=($(compgen -W "dropped passed seen" -- "$cur")); return ;;
	--family) COMPREPLY=($(compgen -W "4 6" -- "$cur")); return ;;
	--class)
		# top: a running class's name (status lists them); load, set, analyze: a definition
		[ "$verb" = top ] && return
		COMPREPLY=($(compgen -W "none \'NAME:" -- "$cur")); return ;;
	--exempt|--deny) COMPREPLY=($(compgen -W "none" -- "$cur")); return ;;
	--affinity) COMPREPLY=($(compgen -W "spread source" -- "$cur")); return ;;
	--engine) COMPREPLY=($(compgen -W "auto live xsk packet" -- "$cur")); return ;;
	--backend) COMPREPLY=($(compgen -W "sketch table dense" -- "$cur")); return ;;
	--on-full) COMPREPLY=($(compgen -W "drop evict-oldest" -- "$cur")); return ;;
	--arrivals) COMPREPLY=($(compgen -W "random paced" -- "$cur")); return ;;
	esac
	if [ "$verb" = deny ] || [ "$verb" = exempt ]; then
		# xdp-pacer deny|exempt ACTION IFNAME [PREFIX...|-] [options]
		local action= nargs=0
		for ((i = i + 1; i < COMP_CWORD; i++)); do
			case ${COMP_WORDS[i]} in
			--timeout|--wait) ((i++)) ;;
			-?*) ;;
			*) [ -z "$action" ] && action=${COMP_WORDS[i]} || ((nargs++)) ;;
			esac
		done
		case $prev in --timeout) COMPREPLY=($(compgen -W "30s 5m 1h 1d" -- "$cur")); return ;; esac
		if [[ $cur == -?* ]]; then
			case $action in
			add) opts="--timeout --wait --help" ;;
			del) opts="--missing-ok --wait --help" ;;
			list) opts="--json --help" ;;
			flush) opts="--wait --help" ;;
			*) opts="--timeout --missing-ok --json --wait --help" ;;
			esac
			COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		elif [ -z "$action" ]; then
			COMPREPLY=($(compgen -W "add del list flush" -- "$cur"))
		elif [ "$nargs" = 0 ]; then
			COMPREPLY=($(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$cur"))
		fi
		return
	fi
	case $verb in
	load) opts="--interval --rate --policy --prefix4 --prefix6 --malformed --mode --deny-mode --budget --slack-time --slack-count --reserve --horizon --backend --on-full --reserve-cells --rows --width --layout --placement --tick --clock --xdp-mode --priority --config --class --exempt --deny --help" ;;
	unload) opts="--netns --help" ;;
	status) opts="--json --help" ;;
	set) opts="--interval --rate --policy --prefix4 --prefix6 --malformed --mode --deny-mode --sample-sources --sample-packets --config --budget --slack-time --slack-count --reserve --horizon --class --exempt --deny --wait --help" ;;
	stats) opts="--watch --count --format --json --output --help" ;;
	query) opts="--class --dport --dst --json --help" ;;
	model) opts="--sources --rows --width --layout --backend --arrivals --target-false-drop --json --help" ;;
	gen) opts="--engine --dist --sources --zipf --good --good-period --family --src-base --dst --dst-mac --src-mac --heavy --heavy-share --count --duration --pps --threads --affinity --json --help" ;;
	record) opts="--output --sample-sources --sample-packets --duration --count --csv --help" ;;
	top) opts="--by --interval --prefix4 --prefix6 --class --rows --sample-packets --counters --json --once --help" ;;
	events) opts="--hold --min-drops --max-rate --sample-packets --prefix4 --prefix6 --max-sources --duration --json --help" ;;
	analyze) opts="--eps --window --target-false-drop --json --report --pcap --interval --policy --prefix4 --prefix6 --config --class --exempt --deny --help" ;;
	exporter) opts="--listen --help" ;;
	*) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	elif [ "$verb" = analyze ]; then
		COMPREPLY=($(compgen -f -- "$cur"))
	elif [ "$verb" != model ] && [ "$verb" != exporter ]; then
		COMPREPLY=($(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$cur"))
	fi
}
complete -F _xdp_pacer xdp-pacer
