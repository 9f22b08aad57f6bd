{{ config(materialized='view') }}
-- orders without one row
select id, k from {{ ref('orders') }} where id <> 7
