# bash completion for preflight(1).  Installed by `make install` as
# share/bash-completion/completions/preflight.  The option lists follow
# each command's --help (tests/packaging.py compares them).

_preflight() {
	local cur prev cmd words
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	cmd=${COMP_WORDS[1]}
	COMPREPLY=()

	if [ "$COMP_CWORD" -eq 1 ]; then
		words="check serve rules explain token migrate backup health version help"
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		return
	fi
	case $prev in
	--format)
		case $cmd in
		rules) words="text json markdown" ;;
		*) words="text json sarif github github-checkrun gitlab junit" ;;
		esac
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		return ;;
	--min-severity)
		mapfile -t COMPREPLY < <(compgen -W "error warning info" -- "$cur")
		return ;;
	--fail-on)
		mapfile -t COMPREPLY < <(compgen -W "error warning" -- "$cur")
		return ;;
	--interconnect)
		mapfile -t COMPREPLY < <(compgen -W "nvlink pcie infiniband ethernet" -- "$cur")
		return ;;
	--auth)
		mapfile -t COMPREPLY < <(compgen -W "none token" -- "$cur")
		return ;;
	--durability)
		mapfile -t COMPREPLY < <(compgen -W "normal full" -- "$cur")
		return ;;
	--ignore)
		if [ -x "$(command -v "${COMP_WORDS[0]}")" ]; then
			words=$("${COMP_WORDS[0]}" rules 2>/dev/null | cut -d' ' -f1)
			mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		fi
		return ;;
	--gpu)
		words="h100-sxm h100-pcie h100-nvl h200 h200-nvl b200 gb200 a100-80gb a100-40gb a100-pcie-80gb a100-pcie-40gb a10g l4 l40s t4 v100-16gb v100-32gb rtx3090 rtx4090 rtx5090 a6000 rtx6000-ada mi250x mi300x"
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		return ;;
	--policy|--model-config|--deepspeed-config|--db|--to|--log|--tls-cert|--tls-key|--ci-secret-file)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return ;;
	--hf-cache)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return ;;
	esac
	case $cmd in
	check)
		words="--gpus --world-size --nodes --gpu --interconnect --torch --gpu-memory-gib --host-memory-gib --dataset-tokens --model-config --hf-cache --deepspeed-config --format --min-severity --verbose --fail-on --ignore --policy --no-policy --axolotl-only --help" ;;
	serve)
		words="-n --listen --db --auth --insecure-no-auth --max-body --request-memory --body-memory --retain-days --durability --cors-origin --allowed-host --log --max-connections --max-connections-per-address --connection-timeout --threads --metrics-token --metrics-token-file --quota-checks-per-minute --quota-bytes-per-day --quota-at-once --query-budget-ms --quick-check-interval --ci-secret-file --ci-team --tls-cert --tls-key --policy --hf-cache --help" ;;
	rules|explain)
		if [ "$cmd" = rules ]; then words="--format --help"; else words="--help"; fi
		if [[ $cur != -* ]] && [ -x "$(command -v "${COMP_WORDS[0]}")" ]; then
			words="$words $("${COMP_WORDS[0]}" rules 2>/dev/null | cut -d' ' -f1)"
		fi ;;
	token)
		if [ "$COMP_CWORD" -eq 2 ]; then words="create list revoke --help"
		else words="--team --admin --db --help"; fi ;;
	migrate) words="--db --help" ;;
	backup) words="--db --to --force --help" ;;
	health) words="--url --timeout --help" ;;
	*) words="--help" ;;
	esac
	if [[ $cur == -* ]] || [ "$cmd" = rules ] || [ "$cmd" = explain ] || [ "$cmd" = token ]; then
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
	else
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
}
complete -o filenames -F _preflight preflight
