{#- Generic test: the model still holds the rows it held when `digest` was taken (a digest kept in the project: a
regression test of data that must not change, such as a reference table). Fails with one row: both digests.

    models:
      - name: country_codes
        data_tests:
          - dsha.dsha_unchanged:
              arguments:
                digest: f81b4f5012...
-#}

{% test dsha_unchanged(model, digest, columns=none) %}
select d.digest as model_digest, '{{ digest }}' as expected_digest
from ({{ dsha.dsha_digest_query(model, columns) }}) d
where not (d.digest <=> '{{ digest }}')
{% endtest %}
