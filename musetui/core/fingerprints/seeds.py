"""Real ids, tokens and signatures from FINGERPRINTS.md and the public captures.

One list for the decoder property tests and ``scripts/fuzz_decoders.py``: the seeds that
mutation starts from, so that fuzzing spends its time near real shapes.
"""

from __future__ import annotations

REAL_ID_SEEDS: tuple[str, ...] = (
    "resp_0953eda47ee17412006933306199c88195b44f9cf2986e1d5b",
    "rs_68da74ab2c48819cb435ff526bd1ba1d0fdbc19a07110799",
    "rs_68082c0556348191af675cee0453109b",
    "ctc_0c83d0280e8ec08f016a98a20b7a5887d1b7c4a79ed9a79b49",
    "resp_cc7bfe18e2f2eca93006515c0fd19cfed16e46a93a60444a",
    "sh_0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e50",
    "req_011CSkYzZmrLKTfC5kKrttht",
    "msg_vrtx_011CfBLyuqQKtoph9kWhiUt5",
    "toolu_bdrk_01AbkxtHRBE6DZyuxjrqa8SJ",
    "msg_01XrsJCi8CQoLcnnWdY8RsJz",
    "call_5tcmcvPueMOTIeYuTUGW0Ss3",
    "call_00_9V0vrf86Pc9aelHCJMZqnJBo",
    "call_0123456789abcdef0123456789abcdef",
    "call_93562515",
    "functions.get_current_weather:0",
    "chatcmpl-tool-8f2c3a9e1b7d4c6e",
    "chatcmpl-D8Z5f52zQqikDBEKQMQoYcWMcWPeU",
    "chatcmpl-1fd017fc-60b8-44eb-a736-375b8e1bc3e7",
    "fp_eaab8d114b_prod0820_fp8_kvcache",
    "req_01kh52madzem68scv0bcz3vm00",
    "019c8a53-a0dd-7130-bcd7-95445d84846a",
    "DniLab2dFPeSxN8PpqXY4Ag",
    "run_shell_command-1754000000000-3f9a2c",
    "accounts/fireworks/models/kimi-k2p6",
    "gAAAAABpAWb7",
    "Eqo+Cqc+Ab4+9vtgONaaz6qwy6WXdp7gCd2w0X+Wz2gaBgY0Gv6A12JKo0y5vQwf9YQFyhMbKr1E9m17VT6HXd7jXzjaGYaE",
    "EsgfCioICBgCIiQxMDE0OTI5My1kMTJiLTRlM2E",
    "Er4BCkYICxgCKkCoxqLHLrx4mFL9Ox7/aHKht87WDzXfvZ7qbZKSnHV8imA5b3LXxuVqcXQ9z5sXwDx20JIW/+6DJehOSNK72L83"
    "Egx0T9s7VzB6QUK9g5kaDO9lGaWN5CPEDJU0lyIw4+Ed3q4N9w+16h3cfQ+9stJXHCl+1nYDxjIOLcyJT8Ug/LTmtlp4bbxWmm"
    "fNicayKiasdReHiOnqz1sKEF0pR4kcnF5mQGdLxk8q3A3NY+wGsH8MtUIqxRgB",
)
