// KnobPins: the knobs a user fixes before the search (sp, cp, ZeRO, offloads, checkpointing,
// tiling), each "any" or a value, as `spplan plan --sp 4 --zero 3 --no-tiled-mlp` fixes them. The
// choices become those flags and are read by the CLI's own reader (search::read_constraints), so a
// pin the model or the cluster refuses gets the CLI's message, not a GUI-only one.
#pragma once

#include <QString>
#include <QWidget>
#include <map>
#include <string>
#include <vector>

#include "planner/config/plan_spec.hpp"
#include "planner/core/status.hpp"
#include "planner/search/search.hpp"

class QCheckBox;
class QComboBox;
class QSpinBox;

namespace spplan::gui {

class KnobPins : public QWidget {
  Q_OBJECT

 public:
  explicit KnobPins(QWidget* parent = nullptr);

  // The pins as search constraints for `base` (its precision and attention settled as the CLI
  // does, with the stack's flags beside them: a named --attention stays named); the CLI's message
  // when a pin cannot hold there.
  Result<search::KnobConstraints> constraints(PlanSpec* base, const std::vector<std::string>& stackFlags = {}) const;
  // The flags the pins stand for: {"--sp", "4", "--no-tiled-mlp"}, "--global-batch N" when one is
  // set and "--risky" when the ranking is by speed alone; none when nothing is pinned.
  std::vector<std::string> flags() const;
  // The combo of a flag ("sp", "zero", "tiled-mlp", ...); null for another name.
  QComboBox* combo(const std::string& flag) const;
  // The switch of --risky: rank by speed alone, safe or not (off: safe plans first).
  QCheckBox* riskyBox() const { return m_risky; }
  // --global-batch N: sequences per optimizer step every plan trains; 0 (shown "each plan's"): not given.
  QSpinBox* globalBatchSpin() const { return m_globalBatch; }
  // Every pin back to "any".
  void clearPins();
  // The pinned knobs by flag ("zero": "3"; none for "any"), and back (a saved session: a flag or a
  // value no combo has is ignored).
  std::map<QString, QString> texts() const;
  void setTexts(const std::map<QString, QString>& texts);

 Q_SIGNALS:
  void changed();

 private:
  std::map<std::string, QComboBox*> m_combos;  // by flag name
  QCheckBox* m_risky = nullptr;
  QSpinBox* m_globalBatch = nullptr;
};

}  // namespace spplan::gui
