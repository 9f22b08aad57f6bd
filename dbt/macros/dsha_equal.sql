{#- Generic test: the model and `compare_to` hold the same rows (in any order and layout), by their dsha digests;
`columns` compares only those columns. Fails with one row: both digests.

    models:
      - name: orders_rebuilt
        data_tests:
          - dsha.dsha_equal:
              arguments:
                compare_to: ref('orders')
-#}

{% test dsha_equal(model, compare_to, columns=none) %}
with model_digest as ({{ dsha.dsha_digest_query(model, columns) }}),
     compare_to_digest as ({{ dsha.dsha_digest_query(compare_to, columns) }})
select m.digest as model_digest, c.digest as compare_to_digest
from model_digest m cross join compare_to_digest c
where not (m.digest <=> c.digest)
{% endtest %}
