"""JSON-RPC methods that only read though no read verb names them, as the chains' own specs define them.

A JSON-RPC request names what it does by its method, and most read methods start with a read
verb (`eth_getBalance`, `getblockchaininfo`, `getAccountInfo`), which the verb rule reads. These
read too, by their specs, with no such verb: Ethereum's execution API (`eth_call` "executes a new
message call immediately without creating a transaction on the block chain", `eth_estimateGas`,
`eth_createAccessList`, and the client and fee-market methods), the `net_` and `web3_` namespaces,
and Solana's two.

Sources: ethereum/execution-apis `src/eth/execute.yaml` (commit ac2d671a), `src/eth/client.yaml`
(2e67ad9e), `src/eth/fee_market.yaml` (8fcafbbc); the `net_` / `web3_` methods of the Ethereum
JSON-RPC specification; Solana's RPC HTTP methods (`isBlockhashValid`, `minimumLedgerSlot`).
"""

from __future__ import annotations

SOURCE = "ethereum/execution-apis src/eth/{execute,client,fee_market}.yaml; Solana RPC HTTP methods"

READ_METHODS = frozenset(
    {"eth_call", "eth_estimateGas", "eth_createAccessList", "eth_chainId", "eth_syncing", "eth_coinbase"}
    | {"eth_accounts", "eth_blockNumber", "eth_gasPrice", "eth_blobBaseFee", "eth_maxPriorityFeePerGas"}
    | {"eth_feeHistory", "eth_protocolVersion", "net_version", "net_listening", "net_peerCount"}
    | {"web3_clientVersion", "web3_sha3", "isBlockhashValid", "minimumLedgerSlot"}
)
