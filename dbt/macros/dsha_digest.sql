{#- The dsha digest of a relation (a model, a source, a seed): the SQL query, and its value.

    {{ dsha.dsha_digest_query(ref('orders')) }}              -> select dsha(*) as digest from ...
    {{ dsha.dsha_digest_query(ref('orders'), ['id', 'k']) }} -> select dsha(`id`, `k`) as digest from ...
    {% set d = dsha.dsha_digest(ref('orders')) %}             -> the digest string (run at execution; none at parse)

Equal digests, equal tables: the same rows in any order and any file layout (SPEC.md). `columns` digests only
those columns, identified by name (as SQL `dsha(id, k)`). -#}

{% macro dsha_columns(columns=none) -%}
  {%- if columns is none -%}*{%- else -%}
    {%- for c in columns -%}{{ adapter.quote(c) }}{{ ", " if not loop.last }}{%- endfor -%}
  {%- endif -%}
{%- endmacro %}

{% macro dsha_digest_query(relation, columns=none) -%}
  select dsha({{ dsha.dsha_columns(columns) }}) as digest from {{ relation }}
{%- endmacro %}

{% macro dsha_digest(relation, columns=none) -%}
  {%- if execute -%}
    {%- set result = run_query(dsha.dsha_digest_query(relation, columns)) -%}
    {{- return(result.columns[0].values()[0]) -}}
  {%- else -%}
    {{- return(none) -}}
  {%- endif -%}
{%- endmacro %}
