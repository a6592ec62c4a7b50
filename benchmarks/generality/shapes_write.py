"""Write actions: the figure a task is about exists only in a write tool's arguments (an amount paid), and the
tool's output is a reference, not a figure. The reviewer reports what was done, with the amount it read from the
record or the calculator."""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.generality import data
from benchmarks.generality.kinds import off
from benchmarks.generality.locale import number
from benchmarks.generality.model import Expect, GenTask, call
from benchmarks.generality.shapes_text import task
from benchmarks.generality.tools import payment_reference

__all__ = ["WRITE_SHAPES"]

PER_ORDER_EUR = 250

_Q_BALANCE = {"en": "Schedule a payment of customer {a}'s whole balance.",
              "fr": "Programmez un paiement du solde complet du client {a}.",
              "de": "Plane eine Zahlung über den gesamten Saldo von Kunde {a} ein.",
              "es": "Programa un pago por todo el saldo del cliente {a}."}
_Q_ORDERS = {"en": "Schedule a payment to customer {a} of 250 EUR per open order.",
             "fr": "Programmez un paiement au client {a} de 250 EUR par commande ouverte.",
             "de": "Plane eine Zahlung an Kunde {a} über 250 EUR pro offene Bestellung ein.",
             "es": "Programa un pago al cliente {a} de 250 EUR por pedido abierto."}
_DONE = {"en": "Scheduled {ref}: {x} EUR to {name} ({a}){why}.",
         "fr": "Paiement {ref} programmé : {x} EUR à {name} ({a}){why}.",
         "de": "Zahlung {ref} eingeplant: {x} EUR an {name} ({a}){why}.",
         "es": "Pago {ref} programado: {x} EUR a {name} ({a}){why}."}
_WHY = {"en": ", {n} open orders x 250 EUR", "fr": ", {n} commandes ouvertes x 250 EUR",
        "de": ", {n} offene Bestellungen x 250 EUR", "es": ", {n} pedidos abiertos x 250 EUR"}


def write_actions(lang: str) -> list[GenTask]:
    rows = data.CUSTOMERS[lang]
    out = []
    for i, (cid, name, _, balance) in enumerate(rows[:2]):
        other = rows[2][1]
        steps = [call(1, "customer", customer_id=cid),
                 call(2, "schedule_payment", (1,), customer_id=cid, amount_eur="$step_1_result.balance_eur")]
        slots = {"ref": payment_reference(cid, balance), "a": cid, "why": ""}
        done = _DONE[lang]
        out.append(task("write_actions", lang, i, "write", _Q_BALANCE[lang].format(a=cid), steps,
                        done.format(x=number(balance, lang, 2), name=name, **slots),
                        {"wrong_entity": done.format(x=number(balance, lang, 2), name=other, **slots),
                         "unsupported_figure": done.format(x=number(off(balance), lang, 2), name=name, **slots)},
                        Expect(number=balance, names=(name,))))
    for i, (cid, name, orders, _) in enumerate(rows[2:], start=2):
        amount = orders * PER_ORDER_EUR
        steps = [call(1, "customer", customer_id=cid),
                 call(2, "calculator", (1,), expression=f"{{$step_1_result.open_orders}} * {PER_ORDER_EUR}"),
                 call(3, "schedule_payment", (2,), customer_id=cid, amount_eur="$step_2_result")]
        slots = {"ref": payment_reference(cid, amount), "a": cid, "name": name}
        done, why = _DONE[lang], _WHY[lang]
        out.append(task("write_actions", lang, i, "write", _Q_ORDERS[lang].format(a=cid), steps,
                        done.format(x=number(amount, lang), why=why.format(n=orders), **slots),
                        {"unsupported_figure": done.format(x=number(off(amount), lang), why=why.format(n=orders),
                                                           **slots),
                         "item_left_out": done.format(x=number(amount - PER_ORDER_EUR, lang),
                                                      why=why.format(n=orders - 1), **slots)},
                        Expect(number=amount)))
    return out


WRITE_SHAPES: dict[str, Callable[[str], list[GenTask]]] = {"write_actions": write_actions}
