"""allotment.reconcile"""
