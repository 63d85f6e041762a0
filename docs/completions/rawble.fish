function __rawble_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __rawble_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __rawble_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __rawble_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __rawble_parse_tokens -S
    set -l unparsed_tokens (__rawble_tokens -pc)
    switch $unparsed_tokens[1]
    case 'rawble'
        __rawble_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'adapters'
            __rawble_parse_subcommand 0 'json' 'v/verbose' 'quiet' 'version' 'h/help'
        case 'decode'
            __rawble_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'hrm'
                __rawble_parse_subcommand -r 1 'json' 'v/verbose' 'quiet' 'version' 'h/help'
            case 'adv'
                __rawble_parse_subcommand -r 1 'json' 'v/verbose' 'quiet' 'version' 'h/help'
            case 'hci'
                __rawble_parse_subcommand -r 1 'json' 'v/verbose' 'quiet' 'version' 'h/help'
            case 'att'
                __rawble_parse_subcommand -r 1 'json' 'v/verbose' 'quiet' 'version' 'h/help'
            case 'value'
                __rawble_parse_subcommand -r 1 'as=' 'json' 'v/verbose' 'quiet' 'version' 'h/help'
            case 'btsnoop'
                __rawble_parse_subcommand 1 'json' 'v/verbose' 'quiet' 'version' 'h/help'
            end
        case 'scan'
            __rawble_parse_subcommand 0 'duration=' 'service=' 'name=' 'address=' 'duplicates' 'passive' 'first' 'transport=' 'btsnoop=' 'trace' 'timeout=' 'json' 'v/verbose' 'quiet' 'version' 'h/help'
        case 'gatt'
            __rawble_parse_subcommand 1 'address-type=' 'transport=' 'btsnoop=' 'trace' 'timeout=' 'io=' 'passkey=' 'confirm' 'private-address' 'security=' 'json' 'v/verbose' 'quiet' 'version' 'h/help'
        case 'read'
            __rawble_parse_subcommand 2 'as=' 'address-type=' 'transport=' 'btsnoop=' 'trace' 'timeout=' 'io=' 'passkey=' 'confirm' 'private-address' 'security=' 'json' 'v/verbose' 'quiet' 'version' 'h/help'
        case 'write'
            __rawble_parse_subcommand 3 'as=' 'without-response' 'address-type=' 'transport=' 'btsnoop=' 'trace' 'timeout=' 'io=' 'passkey=' 'confirm' 'private-address' 'security=' 'json' 'v/verbose' 'quiet' 'version' 'h/help'
        case 'notify'
            __rawble_parse_subcommand 2 'count=' 'duration=' 'indicate' 'as=' 'address-type=' 'transport=' 'btsnoop=' 'trace' 'timeout=' 'io=' 'passkey=' 'confirm' 'private-address' 'security=' 'json' 'v/verbose' 'quiet' 'version' 'h/help'
        case 'shell'
            __rawble_parse_subcommand 1 'address-type=' 'transport=' 'btsnoop=' 'trace' 'timeout=' 'io=' 'passkey=' 'confirm' 'private-address' 'security=' 'json' 'v/verbose' 'quiet' 'version' 'h/help'
        case 'hr'
            __rawble_parse_subcommand 1 'count=' 'csv=' 'jsonl=' 'reset-energy' 'reconnect' 'no-reconnect' 'hrv-every=' 'max-hr=' 'age=' 'transport=' 'btsnoop=' 'trace' 'timeout=' 'io=' 'passkey=' 'confirm' 'private-address' 'security=' 'json' 'v/verbose' 'quiet' 'version' 'h/help'
        case 'report'
            __rawble_parse_subcommand 1 'plot=' 'title=' 'segment=' 'max-hr=' 'age=' 'json' 'v/verbose' 'quiet' 'version' 'h/help'
        case 'peripheral'
            __rawble_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'hr'
                __rawble_parse_subcommand 0 'rate=' 'seed=' 'name=' 'duration=' 'require=' 'io=' 'passkey=' 'confirm' 'private-address' 'transport=' 'btsnoop=' 'trace' 'timeout=' 'json' 'v/verbose' 'quiet' 'version' 'h/help'
            case 'echo'
                __rawble_parse_subcommand 0 'name=' 'duration=' 'require=' 'io=' 'passkey=' 'confirm' 'private-address' 'transport=' 'btsnoop=' 'trace' 'timeout=' 'json' 'v/verbose' 'quiet' 'version' 'h/help'
            end
        case 'pair'
            __rawble_parse_subcommand 1 'address-type=' 'io=' 'passkey=' 'confirm' 'private-address' 'legacy' 'transport=' 'btsnoop=' 'trace' 'timeout=' 'json' 'v/verbose' 'quiet' 'version' 'h/help'
        case 'bonds'
            __rawble_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'list'
                __rawble_parse_subcommand 0 'json' 'v/verbose' 'quiet' 'version' 'h/help'
            case 'remove'
                __rawble_parse_subcommand 1 'json' 'v/verbose' 'quiet' 'version' 'h/help'
            end
        case 'help'
            __rawble_parse_subcommand -r 1 'version'
        end
    end
end

function __rawble_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __rawble_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __rawble_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __rawble_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__rawble_tokens -p)
    if test -z "$(__rawble_tokens -t)"
        set -l index (count (__rawble_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'rawble' -f
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'adapters' -d 'List the kernel\'s Bluetooth adapters (hciN): address, up or down, LE, and the transports each can take.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'decode' -d 'Decode packets and values: no adapter needed.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'scan' -d 'List advertising devices: a live table, or one JSON line per device.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'gatt' -d 'Connect, discover the whole GATT database and read every readable value.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'read' -d 'Read one attribute value (long values whole).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'write' -d 'Write one attribute value.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'notify' -d 'Subscribe to a characteristic and print each value; unsubscribe at the end.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'shell' -d 'Connect once, then read, write, subscribe and scan with commands (gatttool -I).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'hr' -d 'Find a heart-rate strap, connect, and show and log every beat.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'report' -d 'Summarize a heart-rate session that `rawble hr` wrote: heart rate, zones, HRV, artifacts, gaps.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'peripheral' -d 'Be a peripheral: advertise and serve GATT (a simulated heart-rate strap, or an echo service).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'pair' -d 'Connect, pair with rawble\'s own Security Manager, keep the bond, disconnect.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'bonds' -d 'List or remove the bonds rawble\'s own host keeps.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble adapters" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble adapters"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble adapters" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble adapters" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble adapters" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble decode" -eq 1' -fa 'hrm' -d 'A Heart Rate Measurement value (characteristic 2A37).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble decode" -eq 1' -fa 'adv' -d 'Advertising data (the AD structures of an advertisement or scan response).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble decode" -eq 1' -fa 'hci' -d 'One H4 packet: type byte (01 command, 02 ACL, 04 event, …) then the packet.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble decode" -eq 1' -fa 'att' -d 'One ATT PDU (opcode first).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble decode" -eq 1' -fa 'value' -d 'A characteristic or descriptor value, by its UUID (2A19, 2A37, 2904, …) or as a type (--as).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble decode" -eq 1' -fa 'btsnoop' -d 'Every record of a btsnoop capture (H4 1002, HCI 1001 or Linux monitor 2001).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode hrm" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode hrm"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode hrm" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode hrm" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode hrm" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode adv" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode adv"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode adv" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode adv" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode adv" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode hci" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode hci"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode hci" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode hci" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode hci" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode att" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode att"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode att" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode att" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode att" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode value" as' -l 'as' -d 'Decode as this type (little-endian) instead: utf8|hex|u8|u16|u24|u32|u64|s8|s16|s24|s32|s64|f32|f64|medfloat16|medfloat32.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode value" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode value"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode value" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode value" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode value" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode btsnoop" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode btsnoop"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode btsnoop" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode btsnoop" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble decode btsnoop" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" duration' -l 'duration' -d 'Stop after this many seconds (default: until Ctrl-C).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" service' -l 'service' -d 'Only devices advertising this service UUID (180D or 0x180D).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" name' -l 'name' -d 'Only devices whose name contains this text (case-insensitive).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" address' -l 'address' -d 'Only this device.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" duplicates' -l 'duplicates' -d 'Print every report, not only new or changed devices. (On hciN an active scan is the kernel\'s, whose controller drops repeats: a device reports again each time the kernel restarts its scan, about every 10 s; --passive gets every report.)'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" passive' -l 'passive' -d 'Passive scan: no scan requests, so no scan responses.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" first' -l 'first' -d 'Stop at the first device that matches the filters (exit 0); with --duration, 75 when none did in time.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" transport' -l 'transport' -d 'hciN (kernel), user:hciN (HCI user channel), tcp:HOST:PORT, unix:PATH, serial:PATH[:BAUD].' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" btsnoop' -l 'btsnoop' -d 'Write every HCI packet of the session to a btsnoop file.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" trace' -l 'trace' -d 'Every HCI packet and ATT PDU decoded on stderr as it passes, one line each: seconds since the start, > sent or < received, what `decode btsnoop` shows.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" timeout' -l 'timeout' -d 'Bound on connecting and on each ATT transaction, in seconds.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble scan" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" address-type' -l 'address-type' -d 'public or random (default: as seen while scanning, else random).' -rfka 'public random'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" transport' -l 'transport' -d 'hciN (kernel), user:hciN (HCI user channel), tcp:HOST:PORT, unix:PATH, serial:PATH[:BAUD].' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" btsnoop' -l 'btsnoop' -d 'Write every HCI packet of the session to a btsnoop file.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" trace' -l 'trace' -d 'Every HCI packet and ATT PDU decoded on stderr as it passes, one line each: seconds since the start, > sent or < received, what `decode btsnoop` shows.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" timeout' -l 'timeout' -d 'Bound on connecting and on each ATT transaction, in seconds.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" io' -l 'io' -d 'What you can do when pairing on rawble\'s own host: display, keyboard, yesno, keyboard-display, none (Just Works).' -rfka 'display keyboard yesno keyboard-display none'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" passkey' -l 'passkey' -d 'The passkey to type when the peer displays one, or to display (for scripts; else asked on the terminal, or random).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" confirm' -l 'confirm' -d 'Accept a Numeric Comparison without asking (for scripts: the six digits are shown on stderr; check them on the peer).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" private-address' -l 'private-address' -d 'Use a resolvable private address on rawble\'s own host, made from rawble\'s identity key and changed every 15 minutes: devices bonded with rawble recognise it, others see a new device each time.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" security' -l 'security' -d 'Make the link encrypted or authenticated right after connecting (pair, or encrypt with the bond).' -rfka 'encrypted authenticated'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble gatt" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" as' -l 'as' -d 'Read the value as this type (little-endian): utf8|hex|u8|u16|u24|u32|u64|s8|s16|s24|s32|s64|f32|f64|medfloat16|medfloat32 (default: by its UUID, else hex).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" address-type' -l 'address-type' -d 'public or random.' -rfka 'public random'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" transport' -l 'transport' -d 'hciN (kernel), user:hciN (HCI user channel), tcp:HOST:PORT, unix:PATH, serial:PATH[:BAUD].' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" btsnoop' -l 'btsnoop' -d 'Write every HCI packet of the session to a btsnoop file.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" trace' -l 'trace' -d 'Every HCI packet and ATT PDU decoded on stderr as it passes, one line each: seconds since the start, > sent or < received, what `decode btsnoop` shows.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" timeout' -l 'timeout' -d 'Bound on connecting and on each ATT transaction, in seconds.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" io' -l 'io' -d 'What you can do when pairing on rawble\'s own host: display, keyboard, yesno, keyboard-display, none (Just Works).' -rfka 'display keyboard yesno keyboard-display none'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" passkey' -l 'passkey' -d 'The passkey to type when the peer displays one, or to display (for scripts; else asked on the terminal, or random).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" confirm' -l 'confirm' -d 'Accept a Numeric Comparison without asking (for scripts: the six digits are shown on stderr; check them on the peer).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" private-address' -l 'private-address' -d 'Use a resolvable private address on rawble\'s own host, made from rawble\'s identity key and changed every 15 minutes: devices bonded with rawble recognise it, others see a new device each time.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" security' -l 'security' -d 'Make the link encrypted or authenticated right after connecting (pair, or encrypt with the bond).' -rfka 'encrypted authenticated'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble read" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" as' -l 'as' -d 'Give the value as this type (written little-endian): utf8|hex|u8|u16|u24|u32|u64|s8|s16|s24|s32|s64|f32|f64|medfloat16|medfloat32 (default: hex).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" without-response' -l 'without-response' -d 'Write Command: no response from the peer.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" address-type' -l 'address-type' -d 'public or random.' -rfka 'public random'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" transport' -l 'transport' -d 'hciN (kernel), user:hciN (HCI user channel), tcp:HOST:PORT, unix:PATH, serial:PATH[:BAUD].' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" btsnoop' -l 'btsnoop' -d 'Write every HCI packet of the session to a btsnoop file.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" trace' -l 'trace' -d 'Every HCI packet and ATT PDU decoded on stderr as it passes, one line each: seconds since the start, > sent or < received, what `decode btsnoop` shows.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" timeout' -l 'timeout' -d 'Bound on connecting and on each ATT transaction, in seconds.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" io' -l 'io' -d 'What you can do when pairing on rawble\'s own host: display, keyboard, yesno, keyboard-display, none (Just Works).' -rfka 'display keyboard yesno keyboard-display none'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" passkey' -l 'passkey' -d 'The passkey to type when the peer displays one, or to display (for scripts; else asked on the terminal, or random).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" confirm' -l 'confirm' -d 'Accept a Numeric Comparison without asking (for scripts: the six digits are shown on stderr; check them on the peer).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" private-address' -l 'private-address' -d 'Use a resolvable private address on rawble\'s own host, made from rawble\'s identity key and changed every 15 minutes: devices bonded with rawble recognise it, others see a new device each time.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" security' -l 'security' -d 'Make the link encrypted or authenticated right after connecting (pair, or encrypt with the bond).' -rfka 'encrypted authenticated'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble write" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" count' -l 'count' -d 'Stop after this many values.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" duration' -l 'duration' -d 'Stop after this many seconds (default: until --count or Ctrl-C).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" indicate' -l 'indicate' -d 'Subscribe to indications instead of notifications.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" as' -l 'as' -d 'Show each value as this type (little-endian): utf8|hex|u8|u16|u24|u32|u64|s8|s16|s24|s32|s64|f32|f64|medfloat16|medfloat32 (default: by its UUID, else hex).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" address-type' -l 'address-type' -d 'public or random.' -rfka 'public random'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" transport' -l 'transport' -d 'hciN (kernel), user:hciN (HCI user channel), tcp:HOST:PORT, unix:PATH, serial:PATH[:BAUD].' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" btsnoop' -l 'btsnoop' -d 'Write every HCI packet of the session to a btsnoop file.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" trace' -l 'trace' -d 'Every HCI packet and ATT PDU decoded on stderr as it passes, one line each: seconds since the start, > sent or < received, what `decode btsnoop` shows.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" timeout' -l 'timeout' -d 'Bound on connecting and on each ATT transaction, in seconds.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" io' -l 'io' -d 'What you can do when pairing on rawble\'s own host: display, keyboard, yesno, keyboard-display, none (Just Works).' -rfka 'display keyboard yesno keyboard-display none'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" passkey' -l 'passkey' -d 'The passkey to type when the peer displays one, or to display (for scripts; else asked on the terminal, or random).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" confirm' -l 'confirm' -d 'Accept a Numeric Comparison without asking (for scripts: the six digits are shown on stderr; check them on the peer).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" private-address' -l 'private-address' -d 'Use a resolvable private address on rawble\'s own host, made from rawble\'s identity key and changed every 15 minutes: devices bonded with rawble recognise it, others see a new device each time.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" security' -l 'security' -d 'Make the link encrypted or authenticated right after connecting (pair, or encrypt with the bond).' -rfka 'encrypted authenticated'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble notify" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" address-type' -l 'address-type' -d 'public or random, for ADDRESS.' -rfka 'public random'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" transport' -l 'transport' -d 'hciN (kernel), user:hciN (HCI user channel), tcp:HOST:PORT, unix:PATH, serial:PATH[:BAUD].' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" btsnoop' -l 'btsnoop' -d 'Write every HCI packet of the session to a btsnoop file.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" trace' -l 'trace' -d 'Every HCI packet and ATT PDU decoded on stderr as it passes, one line each: seconds since the start, > sent or < received, what `decode btsnoop` shows.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" timeout' -l 'timeout' -d 'Bound on connecting and on each ATT transaction, in seconds.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" io' -l 'io' -d 'What you can do when pairing on rawble\'s own host: display, keyboard, yesno, keyboard-display, none (Just Works).' -rfka 'display keyboard yesno keyboard-display none'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" passkey' -l 'passkey' -d 'The passkey to type when the peer displays one, or to display (for scripts; else asked on the terminal, or random).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" confirm' -l 'confirm' -d 'Accept a Numeric Comparison without asking (for scripts: the six digits are shown on stderr; check them on the peer).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" private-address' -l 'private-address' -d 'Use a resolvable private address on rawble\'s own host, made from rawble\'s identity key and changed every 15 minutes: devices bonded with rawble recognise it, others see a new device each time.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" security' -l 'security' -d 'Make the link encrypted or authenticated right after connecting (pair, or encrypt with the bond).' -rfka 'encrypted authenticated'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble shell" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" count' -l 'count' -d 'Stop after this many valid measurements.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" csv' -l 'csv' -d 'Append every measurement to a CSV file.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" jsonl' -l 'jsonl' -d 'Append every measurement to a JSON lines file.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" reset-energy' -l 'reset-energy' -d 'Reset Energy Expended through the Heart Rate Control Point.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" reconnect' -l 'reconnect' -d 'Scan again and reconnect when the link drops.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" no-reconnect' -l 'no-reconnect' -d 'Scan again and reconnect when the link drops.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" hrv-every' -l 'hrv-every' -d 'With --json, an hrv event every this many seconds: HRV of the beats since the last one, artifacts corrected, the zone (0: none).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" max-hr' -l 'max-hr' -d 'Your maximum heart rate, for the five zones (50-60-70-80-90 % of it).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" age' -l 'age' -d 'Your age, for the zones when --max-hr is not given (max HR = 208 − 0.7 × age, Tanaka 2001).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" transport' -l 'transport' -d 'hciN (kernel), user:hciN (HCI user channel), tcp:HOST:PORT, unix:PATH, serial:PATH[:BAUD].' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" btsnoop' -l 'btsnoop' -d 'Write every HCI packet of the session to a btsnoop file.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" trace' -l 'trace' -d 'Every HCI packet and ATT PDU decoded on stderr as it passes, one line each: seconds since the start, > sent or < received, what `decode btsnoop` shows.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" timeout' -l 'timeout' -d 'Bound on connecting and on each ATT transaction, in seconds.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" io' -l 'io' -d 'What you can do when pairing on rawble\'s own host: display, keyboard, yesno, keyboard-display, none (Just Works).' -rfka 'display keyboard yesno keyboard-display none'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" passkey' -l 'passkey' -d 'The passkey to type when the peer displays one, or to display (for scripts; else asked on the terminal, or random).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" confirm' -l 'confirm' -d 'Accept a Numeric Comparison without asking (for scripts: the six digits are shown on stderr; check them on the peer).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" private-address' -l 'private-address' -d 'Use a resolvable private address on rawble\'s own host, made from rawble\'s identity key and changed every 15 minutes: devices bonded with rawble recognise it, others see a new device each time.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" security' -l 'security' -d 'Make the link encrypted or authenticated right after connecting (pair, or encrypt with the bond).' -rfka 'encrypted authenticated'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble hr" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble report" plot' -l 'plot' -d 'Also draw the session as an SVG: heart rate by zone, the RR tachogram, a Poincaré plot.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble report" title' -l 'title' -d 'The plot\'s title (default: the file\'s name).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble report" segment' -l 'segment' -d 'Length of the HRV segments, in seconds.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble report" max-hr' -l 'max-hr' -d 'Your maximum heart rate, for the five zones (50-60-70-80-90 % of it).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble report" age' -l 'age' -d 'Your age, for the zones when --max-hr is not given (max HR = 208 − 0.7 × age, Tanaka 2001).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble report" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble report"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble report" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble report" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble report" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble peripheral" -eq 1' -fa 'hr' -d 'A simulated heart-rate strap: Heart Rate (measurements, body sensor location, energy reset), Device Information, Battery.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble peripheral" -eq 1' -fa 'echo' -d 'A custom 128-bit service: what a central writes is notified (or indicated) back to every subscriber.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" rate' -l 'rate' -d 'Measurements per second.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" seed' -l 'seed' -d 'Seed of the simulated workout (the same seed, the same session).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" name' -l 'name' -d 'The name to advertise (and the GAP device name).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" duration' -l 'duration' -d 'Stop after this many seconds (default: until Ctrl-C).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" require' -l 'require' -d 'Serve the characteristics\' values, and subscriptions to them, only on an encrypted or authenticated link: a central gets Insufficient Encryption or Insufficient Authentication until it pairs.' -rfka 'encrypted authenticated'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" io' -l 'io' -d 'What you can do when pairing on rawble\'s own host: display, keyboard, yesno, keyboard-display, none (Just Works).' -rfka 'display keyboard yesno keyboard-display none'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" passkey' -l 'passkey' -d 'The passkey to type when the peer displays one, or to display (for scripts; else asked on the terminal, or random).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" confirm' -l 'confirm' -d 'Accept a Numeric Comparison without asking (for scripts: the six digits are shown on stderr; check them on the peer).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" private-address' -l 'private-address' -d 'Use a resolvable private address on rawble\'s own host, made from rawble\'s identity key and changed every 15 minutes: devices bonded with rawble recognise it, others see a new device each time.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" transport' -l 'transport' -d 'hciN (kernel), user:hciN (HCI user channel), tcp:HOST:PORT, unix:PATH, serial:PATH[:BAUD].' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" btsnoop' -l 'btsnoop' -d 'Write every HCI packet of the session to a btsnoop file.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" trace' -l 'trace' -d 'Every HCI packet and ATT PDU decoded on stderr as it passes, one line each: seconds since the start, > sent or < received, what `decode btsnoop` shows.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" timeout' -l 'timeout' -d 'Bound on connecting and on each ATT transaction, in seconds.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral hr" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" name' -l 'name' -d 'The name to advertise (and the GAP device name).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" duration' -l 'duration' -d 'Stop after this many seconds (default: until Ctrl-C).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" require' -l 'require' -d 'Serve the characteristics\' values, and subscriptions to them, only on an encrypted or authenticated link: a central gets Insufficient Encryption or Insufficient Authentication until it pairs.' -rfka 'encrypted authenticated'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" io' -l 'io' -d 'What you can do when pairing on rawble\'s own host: display, keyboard, yesno, keyboard-display, none (Just Works).' -rfka 'display keyboard yesno keyboard-display none'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" passkey' -l 'passkey' -d 'The passkey to type when the peer displays one, or to display (for scripts; else asked on the terminal, or random).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" confirm' -l 'confirm' -d 'Accept a Numeric Comparison without asking (for scripts: the six digits are shown on stderr; check them on the peer).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" private-address' -l 'private-address' -d 'Use a resolvable private address on rawble\'s own host, made from rawble\'s identity key and changed every 15 minutes: devices bonded with rawble recognise it, others see a new device each time.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" transport' -l 'transport' -d 'hciN (kernel), user:hciN (HCI user channel), tcp:HOST:PORT, unix:PATH, serial:PATH[:BAUD].' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" btsnoop' -l 'btsnoop' -d 'Write every HCI packet of the session to a btsnoop file.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" trace' -l 'trace' -d 'Every HCI packet and ATT PDU decoded on stderr as it passes, one line each: seconds since the start, > sent or < received, what `decode btsnoop` shows.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" timeout' -l 'timeout' -d 'Bound on connecting and on each ATT transaction, in seconds.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble peripheral echo" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" address-type' -l 'address-type' -d 'public or random (default: as seen while scanning, else random).' -rfka 'public random'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" io' -l 'io' -d 'What you can do when pairing on rawble\'s own host: display, keyboard, yesno, keyboard-display, none (Just Works).' -rfka 'display keyboard yesno keyboard-display none'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" passkey' -l 'passkey' -d 'The passkey to type when the peer displays one, or to display (for scripts; else asked on the terminal, or random).' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" confirm' -l 'confirm' -d 'Accept a Numeric Comparison without asking (for scripts: the six digits are shown on stderr; check them on the peer).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" private-address' -l 'private-address' -d 'Use a resolvable private address on rawble\'s own host, made from rawble\'s identity key and changed every 15 minutes: devices bonded with rawble recognise it, others see a new device each time.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" legacy' -l 'legacy' -d 'LE legacy pairing only (no LE Secure Connections).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" transport' -l 'transport' -d 'hciN (kernel), user:hciN (HCI user channel), tcp:HOST:PORT, unix:PATH, serial:PATH[:BAUD].' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" btsnoop' -l 'btsnoop' -d 'Write every HCI packet of the session to a btsnoop file.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" trace' -l 'trace' -d 'Every HCI packet and ATT PDU decoded on stderr as it passes, one line each: seconds since the start, > sent or < received, what `decode btsnoop` shows.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" timeout' -l 'timeout' -d 'Bound on connecting and on each ATT transaction, in seconds.' -rfka ''
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble pair" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble bonds" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble bonds" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble bonds" -eq 1' -fa 'list' -d 'List the bonds: peer, authenticated or not, LE Secure Connections or legacy, key size.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_positional "rawble bonds" -eq 1' -fa 'remove' -d 'Forget the bond with a peer (it must pair again).'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble bonds list" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble bonds list"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble bonds list" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble bonds list" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble bonds list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble bonds remove" json' -l 'json' -d 'Machine output: one JSON object per line on stdout.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble bonds remove"' -s 'v' -l 'verbose' -d 'Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble bonds remove" quiet' -l 'quiet' -d 'No status line or spinner on stderr.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble bonds remove" version' -l 'version' -d 'Show the version.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble bonds remove" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'rawble' -n '__rawble_should_offer_completions_for_flags_or_options "rawble help" version' -l 'version' -d 'Show the version.'
