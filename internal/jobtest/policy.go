package jobtest

import (
	busv1alpha1 "volcano.sh/apis/pkg/apis/bus/v1alpha1"
)

func busEvent(e string) busv1alpha1.Event   { return busv1alpha1.Event(e) }
func busAction(a string) busv1alpha1.Action { return busv1alpha1.Action(a) }
