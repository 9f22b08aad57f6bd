-- the digest as a query (dsha_digest_query) and as a value taken at execution (dsha_digest)
select digest, '{{ dsha.dsha_digest(ref("orders")) }}' as digest_value, '{{ dsha.dsha_digest(ref("orders"), ["k"]) }}' as k_digest
from ({{ dsha.dsha_digest_query(ref('orders')) }})
